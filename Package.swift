// swift-tools-version:6.0
import PackageDescription

let strictSwift: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny")
]

let package = Package(
    name: "scrollback",
    products: [
        .executable(name: "scrollback", targets: ["scrollback"]),
        .executable(name: "scrollback-bench", targets: ["scrollback-bench"]),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .systemLibrary(
            name: "CNcursesw",
            providers: [.apt(["libncursesw5-dev"])]
        ),
        .systemLibrary(
            name: "CZlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        .systemLibrary(
            name: "CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]
        ),
        .systemLibrary(
            name: "CCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        .systemLibrary(
            name: "CChafa",
            pkgConfig: "chafa",
            providers: [.apt(["libchafa-dev", "libglib2.0-dev"])]
        ),
        // Images for the reader: decoded by libpng, libjpeg-turbo, libwebp and giflib, drawn
        // by libchafa; in C, as libpng and libjpeg report errors by longjmp.
        .target(
            name: "ImageCodec",
            dependencies: ["CChafa"],
            linkerSettings: [.linkedLibrary("png"), .linkedLibrary("jpeg"), .linkedLibrary("webp"), .linkedLibrary("gif")]
        ),
        .target(
            name: "ScrollbackModel",
            swiftSettings: strictSwift
        ),
        .target(
            name: "SearchTokenizer",
            dependencies: ["CSQLite"]
        ),
        // The browser's record of the signals it caught: in a C file, so that there is one.
        .target(name: "TerminalSignalState"),
        .target(
            name: "ScrollbackStorage",
            dependencies: ["ScrollbackModel", "CSQLite", "SearchTokenizer", "CCrypto"],
            swiftSettings: strictSwift
        ),
        .target(
            name: "ScrollbackDemo",
            dependencies: ["ScrollbackModel", "ScrollbackStorage"],
            swiftSettings: strictSwift
        ),
        .target(
            name: "ScrollbackExport",
            dependencies: ["ScrollbackModel", "ScrollbackStorage", "TerminalText"],
            swiftSettings: strictSwift
        ),
        .target(
            name: "ScrollbackImport",
            dependencies: ["ScrollbackModel", "ScrollbackStorage", "ScrollbackExport", "CZlib", "CCrypto"],
            swiftSettings: strictSwift
        ),
        .target(
            name: "TerminalText",
            swiftSettings: strictSwift
        ),
        .target(
            name: "ScrollbackSync",
            dependencies: ["ScrollbackModel", "ScrollbackStorage", "TerminalText", "CLibPQ", "CCrypto"],
            swiftSettings: strictSwift
        ),
        .target(
            name: "ScrollbackViewModels",
            dependencies: ["ScrollbackModel", "TerminalText"],
            swiftSettings: strictSwift
        ),
        .target(
            name: "ScrollbackTerminal",
            dependencies: ["ScrollbackModel", "ScrollbackViewModels", "TerminalText", "CNcursesw", "TerminalSignalState", "ImageCodec"],
            swiftSettings: strictSwift
        ),
        .target(
            name: "ScrollbackCLI",
            dependencies: [
                "ScrollbackModel", "ScrollbackStorage", "ScrollbackDemo", "TerminalText", "ScrollbackViewModels",
                "ScrollbackTerminal", "ScrollbackImport", "ScrollbackExport", "ScrollbackSync",
            ],
            swiftSettings: strictSwift
        ),
        .executableTarget(
            name: "scrollback",
            dependencies: ["ScrollbackCLI"],
            swiftSettings: strictSwift
        ),
        .executableTarget(
            name: "scrollback-bench",
            dependencies: [
                "ScrollbackModel", "ScrollbackStorage", "ScrollbackDemo", "ScrollbackViewModels", "ScrollbackTerminal",
                "ScrollbackImport", "ScrollbackExport", "ScrollbackSync", "CSQLite", "SearchTokenizer", "CLibPQ", "TestSupport", "ImageCodec",
            ],
            swiftSettings: strictSwift
        ),
        .target(
            name: "TestSupport",
            dependencies: ["ScrollbackModel", "ScrollbackStorage", "ScrollbackDemo", "CSQLite"],
            path: "Tests/TestSupport",
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "ScrollbackStorageTests",
            dependencies: ["ScrollbackModel", "ScrollbackStorage", "TestSupport"],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "ScrollbackDemoTests",
            dependencies: ["ScrollbackDemo", "ScrollbackModel", "ScrollbackStorage", "TestSupport"],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "ScrollbackViewModelsTests",
            dependencies: [
                "ScrollbackViewModels", "ScrollbackModel", "ScrollbackStorage", "ScrollbackImport", "ScrollbackExport", "TerminalText", "TestSupport",
            ],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "ScrollbackTerminalTests",
            dependencies: [
                "ScrollbackTerminal", "ScrollbackViewModels", "ScrollbackModel", "ScrollbackStorage", "TerminalText",
                "TestSupport",
            ],
            exclude: ["Golden"],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "ScrollbackImportTests",
            dependencies: ["ScrollbackImport", "ScrollbackExport", "ScrollbackModel", "ScrollbackStorage", "TestSupport"],
            exclude: ["Fixtures"],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "ScrollbackSyncTests",
            dependencies: [
                "ScrollbackSync", "ScrollbackModel", "ScrollbackStorage", "ScrollbackExport", "ScrollbackImport", "ScrollbackDemo", "TestSupport",
            ],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "ScrollbackExportTests",
            dependencies: ["ScrollbackExport", "ScrollbackImport", "ScrollbackModel", "ScrollbackStorage", "TestSupport"],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "TerminalTextTests",
            dependencies: ["TerminalText"],
            exclude: ["FuzzFindings"],
            swiftSettings: strictSwift
        ),
        // The command line in process: the parser, the table, what is generated from it.
        .testTarget(
            name: "ScrollbackCLITests",
            dependencies: ["ScrollbackCLI", "ScrollbackModel", "ScrollbackStorage", "ScrollbackViewModels", "TestSupport"],
            swiftSettings: strictSwift
        ),
        // The built binary as a person runs it: commands, the browser in tmux, attacks.
        .testTarget(
            name: "ScrollbackEndToEndTests",
            dependencies: [
                "ScrollbackCLI", "ScrollbackModel", "ScrollbackStorage", "ScrollbackViewModels", "ScrollbackSync", "ScrollbackImport",
                "ScrollbackExport", "ScrollbackDemo", "TestSupport",
            ],
            swiftSettings: strictSwift
        ),
    ],
    swiftLanguageModes: [.v6]
)
