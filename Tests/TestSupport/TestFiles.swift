import Foundation

/// Files the tests build as an export holds them: ZIP archives (Python's zipfile, as the
/// exports' own are made), real images (ImageMagick), bytes that do not compress.
public enum TestFiles {
    /// Bytes that do not compress (as a photo's), from a seed.
    public static func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var state = seed
        return (0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 33)
        }
    }

    /// Writes `files` (name in the archive → bytes) as a deflated ZIP in `folder`; its path.
    public static func zip(_ files: [String: [UInt8]], in folder: TemporaryDirectory, named: String = "export.zip") throws -> String {
        var script = "import zipfile, sys\nz = zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED)\n"
        for (index, (name, bytes)) in files.sorted(by: { $0.key < $1.key }).enumerated() {
            let path = folder.file("zip-entry-\(index)")
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            script += "z.write(\(String(reflecting: path)), \(String(reflecting: name)))\n"
        }
        script += "z.close()\n"
        let zip = folder.file(named)
        let outcome = try ChildProcess.run("/usr/bin/env", ["python3", "-c", script, zip])
        guard outcome.ending.status == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "zipfile: \(outcome.errorText)"])
        }
        return zip
    }

    /// ImageMagick's convert (Debian's `imagemagick`, which `.ci/run` installs), found by its
    /// own path: another `convert` earlier in PATH is not it.
    public static var convert: String? {
        ["/usr/bin/convert", "/usr/bin/magick", "/usr/local/bin/magick"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// A real image of `width`×`height` pixels in `format` (png, jpg, gif, webp), a gradient
    /// so that it is not trivially small: its bytes.
    public static func image(_ format: String, width: Int, height: Int, in folder: TemporaryDirectory) throws -> [UInt8] {
        guard let convert else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSLocalizedDescriptionKey: "ImageMagick is not installed: apt-get install imagemagick"])
        }
        let path = folder.file("image-\(width)x\(height).\(format)")
        let outcome = try ChildProcess.run(convert, ["-size", "\(width)x\(height)", "gradient:red-blue", path])
        guard outcome.ending.status == 0, let data = FileManager.default.contents(atPath: path) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "convert: \(outcome.errorText)"])
        }
        return Array(data)
    }
}
