import Foundation
import ImageCodec
import ScrollbackTerminal

/// Attachments: importing a ChatGPT export whose images weigh a gigabyte, against copying
/// those bytes with `cp` (and syncing the copy, as the import syncs) plus importing the same
/// export without them; its peak memory against
/// that import's; drawing a 2-megapixel PNG as the reader does, against the same decode and
/// draw in a C loop.
@MainActor
enum AttachmentBench {
    static func run(work: String, binary: String, quick: Bool, report: inout Report) throws {
        let folder = (work as NSString).appendingPathComponent("attachments")
        try? FileManager.default.removeItem(atPath: folder)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try importing(folder: folder, quick: quick, report: &report)
        try drawing(folder: folder, quick: quick, report: &report)
    }

    /// 2,000 conversations (100 quick), each with an image of 500 kB (200 kB quick) that
    /// does not compress, as photos do: 1 GB in all.
    static func importing(folder: String, quick: Bool, report: inout Report) throws {
        let count = quick ? 100 : 2_000
        let size = quick ? 200_000 : 500_000
        let script = """
            import json, os, random, sys, zipfile
            folder, count, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
            conversations = []
            for i in range(count):
                t = 1767261600 + i * 60
                node = {"id": "u", "parent": None, "children": ["a"], "message": {"id": "u", "author": {"role": "user"}, "create_time": t,
                    "content": {"content_type": "multimodal_text", "parts": [{"content_type": "image_asset_pointer", "asset_pointer": "file-service://file-I%05d" % i}, "what is in this photo %d?" % i]},
                    "metadata": {"attachments": [{"id": "file-I%05d" % i, "name": "photo%d.jpg" % i, "mime_type": "image/jpeg"}]}}}
                answer = {"id": "a", "parent": "u", "children": [], "message": {"id": "a", "author": {"role": "assistant"}, "create_time": t + 5,
                    "content": {"content_type": "text", "parts": ["a photo of a cat, number %d" % i]}, "metadata": {"model_slug": "gpt-4o"}}}
                conversations.append({"id": "c%d" % i, "title": "Photo %d" % i, "create_time": t, "update_time": t + 5, "current_node": "a", "mapping": {"u": node, "a": answer}})
            text = json.dumps(conversations)
            rng = random.Random(7)
            with zipfile.ZipFile(os.path.join(folder, "with.zip"), "w", zipfile.ZIP_STORED) as z, open(os.path.join(folder, "bytes"), "wb") as raw:
                z.writestr("conversations.json", text, zipfile.ZIP_DEFLATED)
                for i in range(count):
                    data = rng.randbytes(size)
                    z.writestr("file-I%05d-photo%d.jpg" % (i, i), data)
                    raw.write(data)
            with zipfile.ZipFile(os.path.join(folder, "without.zip"), "w") as z:
                z.writestr("conversations.json", text, zipfile.ZIP_DEFLATED)
            """
        let made = try Measure.run("/usr/bin/env", ["python3", "-c", script, folder, String(count), String(size)])
        guard made.status == 0 else { throw BenchError("making the export with images failed (\(made.status))") }
        func path(_ name: String) -> String { (folder as NSString).appendingPathComponent(name) }
        func fresh(_ name: String) -> String {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path(name) + suffix) }
            return path(name)
        }
        // Without first, then the copy, then with: each reads files the page cache holds.
        let without = try Measure.run(CommandLine.arguments[0], ["--child", "import", "--db", fresh("without.sqlite"), "--file", path("without.zip")])
        // The copy made as durable as the import makes its bytes (it syncs them): cp, then
        // sync of the copy.
        let copy = try Measure.run("/bin/sh", ["-c", "cp \"$0\" \"$1\" && sync \"$1\"", path("bytes"), fresh("copy")])
        let with = try Measure.run(CommandLine.arguments[0], ["--child", "import", "--db", fresh("with.sqlite"), "--file", path("with.zip")])
        guard without.status == 0, copy.status == 0, with.status == 0, let peakWith = with.peakKilobytes, let peakWithout = without.peakKilobytes else {
            throw BenchError("an import of the export with images failed (\(without.status), \(copy.status), \(with.status))")
        }
        let baseline = copy.milliseconds + without.milliseconds
        let megabytes = Double(count * size) / 1_000_000
        report.add(
            "attachments", "import of \(count) conversations with \(Int(megabytes)) MB of images vs cp + sync of the bytes + the import without them",
            ours: with.milliseconds, baseline: baseline, unit: "ms", figure: with.milliseconds / baseline, figureName: "× baseline", atMost: 1.5)
        report.add(
            "attachments", "peak RSS of that import vs the import without images", ours: Double(peakWith) / 1024,
            baseline: Double(peakWithout) / 1024, unit: "MiB", figure: Double(peakWith) / Double(max(peakWithout, 1)), figureName: "×",
            atMost: 1.5)
    }

    /// A 1920 × 1080 PNG (2 megapixels, plasma: it does not compress away), drawn for kitty
    /// in 100 × 30 cells as the reader does it, against the C loop.
    static func drawing(folder: String, quick: Bool, report: inout Report) throws {
        let png = (folder as NSString).appendingPathComponent("two-megapixels.png")
        guard let convert = ["/usr/bin/convert", "/usr/bin/magick"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw BenchError("ImageMagick is not installed (apt-get install imagemagick)")
        }
        let made = try Measure.run(convert, ["-size", "1920x1080", "plasma:fractal", png])
        guard made.status == 0, let bytes = FileManager.default.contents(atPath: png).map(Array.init) else {
            throw BenchError("convert could not make the PNG (\(made.status))")
        }
        let turns = quick ? 3 : 10
        let columns = 100, rows = 30
        let cell = (width: 10, height: 20)
        var failed = false
        let ours = Measure.median(
            Measure.samples(turns) {
                guard case .success(let image) = DecodedImage.decode(bytes),
                    image.rendered(as: .kitty, columns: columns, rows: rows, cell: cell) != nil
                else {
                    failed = true
                    return
                }
            })
        var loop: [Double] = []
        for _ in 0..<turns {
            let nanoseconds = bytes.withUnsafeBufferPointer {
                sb_image_bench($0.baseAddress, $0.count, 1, Int32(SB_RENDER_KITTY), Int32(columns), Int32(rows), Int32(cell.width), Int32(cell.height))
            }
            if nanoseconds == 0 { failed = true }
            loop.append(Double(nanoseconds) / 1_000_000)
        }
        guard !failed else { throw BenchError("the PNG could not be decoded or drawn") }
        let baseline = Measure.median(loop)
        report.add(
            "attachments", "decode + draw (kitty) of a 2 MP PNG on a key vs the same in a C loop", ours: ours, baseline: baseline, unit: "ms",
            figure: ours / baseline, figureName: "× C", atMost: 1.5)
    }
}
