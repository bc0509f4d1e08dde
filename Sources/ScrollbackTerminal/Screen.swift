import ScrollbackViewModels

/// How a piece of text is drawn. Colours are hints: a monochrome or NO_COLOR screen uses
/// only the attributes.
public struct TextStyle: Hashable, Sendable {
    public enum Color: Int, Sendable, CaseIterable {
        case red = 1, green, yellow, blue, magenta, cyan
    }

    public var bold = false
    public var reverse = false
    public var dim = false
    public var underline = false
    public var color: Color?

    public init(bold: Bool = false, reverse: Bool = false, dim: Bool = false, underline: Bool = false, color: Color? = nil) {
        self.bold = bold
        self.reverse = reverse
        self.dim = dim
        self.underline = underline
        self.color = color
    }

    public static let plain = TextStyle()
}

/// Where the browser draws: the terminal, or memory in tests.
@MainActor
public protocol Screen: AnyObject {
    var width: Int { get }
    var height: Int { get }
    /// Blanks everything.
    func clear()
    /// Draws already-safe text at a cell; anything past the right edge is cut off.
    func draw(_ text: String, row: Int, column: Int, style: TextStyle)
    /// Where the text cursor shows, or nil to hide it.
    func placeCursor(row: Int, column: Int)
    func hideCursor()
}

/// The styles of the palette's roles (`[colors]` in the config file).
public struct Palette: Sendable {
    private var styles: [ColorRole: TextStyle]

    public static let standard = Palette(ColorRole.allCases.reduce(into: [:]) { $0[$1] = $1.standard })

    /// The styles for `specs` (attribute words and a colour); a role left out is standard.
    public init(_ specs: [ColorRole: String]) {
        styles = [:]
        for role in ColorRole.allCases {
            styles[role] = Self.style(specs[role] ?? role.standard)
        }
    }

    public subscript(role: ColorRole) -> TextStyle { styles[role] ?? .plain }

    static func style(_ spec: String) -> TextStyle {
        var style = TextStyle()
        for word in spec.split(separator: " ") {
            switch word {
            case "bold": style.bold = true
            case "dim": style.dim = true
            case "reverse": style.reverse = true
            case "underline": style.underline = true
            default:
                if let index = ColorRole.colors.firstIndex(of: String(word)) {
                    style.color = TextStyle.Color(rawValue: index + 1)
                }
            }
        }
        return style
    }
}
