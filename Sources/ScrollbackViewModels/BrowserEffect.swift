import ScrollbackModel
/// Something the browser asks its front end to do outside the screen: the clipboard, or a
/// program that takes the terminal for a while. Text from the database reaches a program
/// only on its standard input (or in a file it is given the name of), never in a command
/// line.
public enum BrowserEffect: Equatable, Sendable {
    /// Puts `text` on the clipboard (OSC 52, and a clipboard program when there is one);
    /// `what` names it for the footer ("message 4", "the code block").
    case copy(text: String, what: String)
    /// Runs `command` (typed at the `|` prompt) with `input`, exact, on its standard input,
    /// the terminal handed over until it ends and Enter is pressed.
    case pipe(command: String, input: String)
    /// Shows `text` (already safe for a terminal) in the pager.
    case page(text: String)
    /// Opens `text` (already safe) in the editor, as a read-only temporary file named after
    /// `name`, removed afterwards.
    case edit(text: String, name: String)
    /// Writes the conversations `ids` to the file `path` (its extension says the format:
    /// .md, .json or .jsonl), as `scrollback export --out` does; `showingHidden` (the
    /// reader's `z`) puts the hidden messages into Markdown too, as `export --hidden` does.
    case export(ids: [Int64], path: String, showingHidden: Bool)
    /// Opens the attachment with the system's viewer, through a private copy that goes
    /// when the browser exits.
    case openAttachment(AttachmentDTO)
    /// Writes the attachment's bytes to `path` (typed: `~/` is the home folder), never over
    /// a file that is there.
    case saveAttachment(AttachmentDTO, path: String)
}
