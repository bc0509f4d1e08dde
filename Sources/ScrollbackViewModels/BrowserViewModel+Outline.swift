import Foundation
import ScrollbackModel
import TerminalText

/// The outline of branches: its keys' handling.
extension BrowserViewModel {
    func handleInOutline(_ command: BrowserCommand) throws {
        guard let outline, let reader else {
            mode = reader == nil ? .list : .reader
            return
        }
        switch command {
        case .down: outline.move(by: 1)
        case .up: outline.move(by: -1)
        case .pageDown, .halfPageDown: outline.move(by: max(contentHeight - 1, 1))
        case .pageUp, .halfPageUp: outline.move(by: -max(contentHeight - 1, 1))
        case .top: outline.move(by: -outline.entries.count)
        case .bottom: outline.move(by: outline.entries.count)
        case .open:
            if let entry = outline.selected, entry.leaf != reader.branch.leaf {
                let leaving = reader.focusedMessage.flatMap { focused in reader.branch.leaf.map { (focused.id, $0) } }
                try reader.showBranch(endingAt: entry.leaf, leaving: leaving)
                try reader.show(position: max(entry.place - 1, 0))
                status = "Branch \(NumberText.grouped(outline.selectedBranchNumber)) of \(NumberText.grouped(outline.branchCount))" + choiceNote(reader)
            }
            self.outline = nil
            mode = .reader
        case .back, .quit, .outline:
            self.outline = nil
            mode = .reader
        case .help: openHelp()
        case .suspend: break
        default:
            status = "Enter shows the branch, Esc goes back"
        }
    }
}
