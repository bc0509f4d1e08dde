import Testing

import ScrollbackModel
@testable import ScrollbackStorage
import ScrollbackViewModels
import TestSupport

/// config.toml: the default file means the defaults; bad lines are reported by line and
/// left out; keys move from command to command.
@Suite("The config file")
@MainActor
struct ConfigTests {
    @Test("the default file, read back, is the defaults: no problem, the same key for every command on every screen")
    func defaultFile() {
        let config = BrowserConfig.parse(BrowserConfig.defaultFile())
        #expect(config.problems.isEmpty, "\(config.problems)")
        #expect(config.wheelStep == 3 && config.dateFormat == BrowserConfig.standardDateFormat && config.pager == nil)
        let keymap = config.keymap
        for screen in BrowserScreen.allCases {
            for binding in Keymap.standard.keymap(for: screen) {
                for key in binding.keys {
                    #expect(keymap.command(for: key, on: screen) == Keymap.standard.command(for: key, on: screen), "\(screen) \(key)")
                }
            }
        }
        // Every command and every colour role is in it, by its config name.
        for command in BrowserCommand.allCases { #expect(BrowserConfig.defaultFile().contains("\n\(command.configName) = [")) }
        for role in ColorRole.allCases { #expect(BrowserConfig.defaultFile().contains("\n\(role.rawValue) = \"")) }
    }

    @Test("a bad line says file:line and what works, and only that line is left out")
    func badLines() {
        let text = """
            [colors]
            header = "bold red"
            colour = "red"
            user = "blinking"
            [display]
            wheel_step = 500
            date_format = "%d.%m.%Y"
            [keys]
            delete = "x"
            search = ["Ctrl-Ä"]
            quit = "Q"
            [sounds]
            beep = 1
            [programs]
            pager = "most"
            editor = "unterminated
            """
        let config = BrowserConfig.parse(text)
        #expect(config.problems == [
            "config.toml:3: unknown key 'colour' in [colors]; the roles are header, selection, marked, highlight, hint, user, assistant, system, tool, code, fence, attachment, conversations, tokens",
            "config.toml:4: 'blinking' is not a colour word: use bold, dim, reverse, underline, plain, red, green, yellow, blue, magenta, cyan",
            "config.toml:6: wheel_step is a whole number from 1 to 50",
            "config.toml:10: 'Ctrl-Ä' is not a key name (a character, Ctrl-X, Alt-x, Up, Down, Left, Right, PgUp, PgDn, Home, End, Enter, Esc, Tab, Space, Backspace, Delete)",
            "config.toml:12: unknown section 'sounds'; the sections are [keys], [colors], [display], [programs], [sync] and [sources]",
            "config.toml:16: a quote is not closed",
        ])
        #expect(config.colors == [.header: "bold red"])
        #expect(config.wheelStep == 3 && config.dateFormat == "%d.%m.%Y" && config.pager == "most" && config.editor == nil)
        let keymap = config.keymap
        #expect(keymap.command(for: .character("x"), on: .list) == .delete)
        #expect(keymap.command(for: .character("d"), on: .list) == nil)
        #expect(keymap.command(for: .character("Q"), on: .list) == .quit)
        #expect(keymap.command(for: .character("q"), on: .list) == nil)
        #expect(keymap.command(for: .character("/"), on: .list) == .search)
        // Help and the footer follow the keys in use.
        #expect(keymap.helpLines(for: .list).contains { $0.hasPrefix("x ") && $0.hasSuffix("Delete the conversation (asks first)") })
        #expect(keymap.hints([.help, .search, .quit], on: .list) == "? help  / search  Q quit")
    }

    @Test("keys from the config act in the browser; the wheel step and the date format too")
    func applied() throws {
        let config = BrowserConfig.parse("[keys]\ndelete = \"x\"\n[display]\nwheel_step = 5\ndate_format = \"%d.%m.%Y\"\n")
        let fixture = try BrowserFixture(store: BrowserFixture.store(count: 20))
        let browser = fixture.browser
        browser.keymap = config.keymap
        browser.wheelStep = config.wheelStep
        browser.dateFormat = config.dateFormat
        try fixture.press(.character("d"))
        #expect(browser.prompt == nil)
        try fixture.press(.character("x"))
        #expect(browser.deleteQuestion(width: 80) != nil)
        try fixture.press(.escape, .wheelDown)
        #expect(browser.list.selection == 5)
        try fixture.press(.enter)
        #expect(browser.reader?.lines.first?.text.contains(" · 15.01.2027") == true, "\(String(describing: browser.reader?.lines.first))")
    }

    @Test("second hostile round: CRLF files, a bad byte in one line, keys a terminal cannot send or that clash, unsafe key names, bad date formats")
    func hostileConfig() {
        let lf = "# mine\n[keys]\nquit = \"Q\"\nhelp = \"H\"\n[display]\nwheel_step = 5\n"
        let crlf = BrowserConfig.parse(lf.replacingOccurrences(of: "\n", with: "\r\n"))
        #expect(crlf == BrowserConfig.parse(lf) && crlf.problems.isEmpty && crlf.wheelStep == 5 && crlf.keys[.quit] == [.character("Q")])
        let mixed = BrowserConfig.parse("[keys]\nquit = \"Q\"\r\nhelp = \"H\"\r\nup = \"K\"\n")
        #expect(mixed.problems.isEmpty && mixed.keys.count == 3, "\(mixed.problems)")
        let bad = BrowserConfig.parse("[keys]\nquit = \"Q\"\n# caf\u{FFFD}\n")
        #expect(bad.problems == ["config.toml:3: this line is not UTF-8 text; it is left out"] && bad.keys[.quit] == [.character("Q")])
        let keys = BrowserConfig.parse("[keys]\ndown = [\"j\", \"Ctrl-C\"]\nsearch = \"Ctrl-M\"\nup = \"z\"\ntop = \"z\"\nhelp = \"\u{202E}\"\n")
        #expect(keys.problems == [
            "config.toml:2: 'Ctrl-C' cannot be given to another command: Ctrl-C always quits",
            "config.toml:3: 'Ctrl-M' cannot be given to a command: Ctrl-M is Enter to a terminal (use Enter)",
            "config.toml:5: 'z' is given to up already; this line is left out",
            "config.toml:6: '⍰' is not a key name (a character, Ctrl-X, Alt-x, Up, Down, Left, Right, PgUp, PgDn, Home, End, Enter, Esc, Tab, Space, Backspace, Delete)",
        ], "\(keys.problems)")
        let dates = BrowserConfig.parse("[display]\ndate_format = \"%Q\"\n")
        #expect(dates.problems.first?.hasPrefix("config.toml:2: date_format: '%' must be followed by a strftime conversion") == true)
        #expect(BrowserConfig.parse("[display]\ndate_format = \"%d.%m.%Y %% %H\"\n").problems.isEmpty)
    }

    @Test("[sync]: secret_command needs %s, interval is 10 to 3600 seconds")
    func syncSection() {
        let good = BrowserConfig.parse("[sync]\nsecret_command = \"pass show scrollback/%s\"\ninterval = 120\n")
        #expect(good.problems.isEmpty && good.secretCommand == "pass show scrollback/%s" && good.syncInterval == 120)
        let bad = BrowserConfig.parse("[sync]\nsecret_command = \"pass show scrollback\"\ninterval = 5\nserver = \"x\"\n")
        #expect(bad.problems.count == 3 && bad.secretCommand == nil && bad.syncInterval == 60)
        #expect(bad.problems[0].contains("needs %s") && bad.problems[1].contains("10 to 3600") && bad.problems[2].contains("unknown key 'server' in [sync]"))
    }
}
