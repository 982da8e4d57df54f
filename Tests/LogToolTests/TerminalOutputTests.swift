import Foundation
import Testing
import CSQLite
import JSONDocument
import LogToolCore

/// Names cannot forge terminal output (Spec/README.md 4.1): a folder whose ensemble, store
/// identifier, file names and entity names hold ESC and BEL sequences, CR, LF, DEL and C1
/// controls, and a name that is not UTF-8. No command's text output may carry one of them.
@Suite("Text output of hostile names")
struct TerminalOutputTests {
    /// A window-title sequence, a screen clear, colours, a forged line, DEL and CSI (U+009B).
    static let hostile = "\u{1B}]0;owned\u{07}\u{1B}[2J\u{1B}[31m\r\n0 errors\u{7F}\u{9B}1m"

    /// A cloud folder with one ensemble `E<name>` of two events of store `S<name>`, with a
    /// revision gap between them (so that merge and verify report findings naming the store),
    /// an entity named `Item<name>`, a debris file `x<name>.tmp` and one whose name is not UTF-8.
    static func folder(in scratch: URL, name hostile: String = hostile) throws -> (root: URL, ensemble: URL, event: URL) {
        let root = scratch.appendingPathComponent("cloud")
        let ensemble = root.appendingPathComponent("E" + hostile)
        for sub in ["stores", "events", "baselines", "data"] {
            try FileManager.default.createDirectory(at: ensemble.appendingPathComponent(sub), withIntermediateDirectories: true)
        }
        let store = "S" + hostile
        let quotedStore = JSONWriter().string(.string(store))
        let entity = JSONWriter().string(.string("Item" + hostile))
        func event(_ count: Int, _ revision: Int) -> String {
            #"{"changesByEntity":{\#(entity):[{"globalIdentifier":"i\#(count)","properties":[{"propertyName":"title","type":0,"value":"t"}],"type":100}]},"#
                + #""globalCount":\#(count),"revisionsByStoreIdentifier":{\#(quotedStore):\#(revision)},"storeIdentifier":\#(quotedStore),"#
                + #""timestamp":"1\#(count).0","type":200,"uniqueIdentifier":"U-\#(count)"}"#
        }
        try Data(event(1, 0).utf8).write(to: ensemble.appendingPathComponent("events/1_\(store)_0.cdeevent"))
        try Data(event(2, 2).utf8).write(to: ensemble.appendingPathComponent("events/2_\(store)_2.cdeevent"))
        try Data(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>storeIdentifier</key><string>S</string></dict></plist>
            """.utf8
        ).write(to: ensemble.appendingPathComponent("stores/\(store)"))
        try Data("debris".utf8).write(to: ensemble.appendingPathComponent("events/x\(hostile).tmp"))
        // A name that is not UTF-8 (0xFF, then ESC): written through the C API, bytes as they are.
        let raw = Array(ensemble.appendingPathComponent("data").path.utf8) + Array("/bad".utf8) + [0xFF, 0x1B] + Array("name".utf8) + [0]
        let fd = raw.withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { name in name.baseAddress.map { open($0, O_CREAT | O_WRONLY, 0o644) } ?? -1 }
        }
        #expect(fd >= 0)
        close(fd)
        return (root, ensemble, ensemble.appendingPathComponent("events/2_\(store)_2.cdeevent"))
    }

    /// The scalars of `text` that a terminal would act on: every control character but the LF
    /// that ends a line (and, where allowed, the tab between columns), DEL, C1, and U+FFFD
    /// (a byte that was not UTF-8 reached the output).
    static func forbidden(_ text: String, tabs: Bool) -> [String] {
        text.unicodeScalars.filter { scalar in
            switch scalar.value {
            case 0x0A: false
            case 0x09: !tabs
            case 0x00...0x1F, 0x7F...0x9F, 0xFFFD: true
            default: false
            }
        }.map { String(format: "U+%04X", $0.value) }
    }

    @Test("verify, inspect, repair, merge, history, convert and timeline write no control character of a name")
    func noControlCharacters() throws {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let (root, ensemble, event) = try Self.folder(in: scratch)
        let commands: [[String]] = [
            ["verify", root.path], ["verify", ensemble.path], ["inspect", root.path], ["inspect", event.path],
            ["repair", root.path], ["merge", root.path],
            ["history", "--entity", "Item" + Self.hostile, "--id", "i1", ensemble.path],
            ["convert", ensemble.path, scratch.appendingPathComponent("converted" + Self.hostile).path],
            ["timeline", "-o", scratch.appendingPathComponent("page.html").path, root.path],
            ["inspect", scratch.appendingPathComponent("missing" + Self.hostile).path],
        ]
        // The state document of a merge that succeeds is JSON (Spec/v2-json.md 6.3), not text:
        // only its standard error is text.
        let single = LogTool.runCapturing(arguments: ["merge", event.path])
        #expect(single.status == 0 && single.stdout.hasPrefix("{"))
        #expect(Self.forbidden(single.stderr, tabs: false).isEmpty)
        var sawName = false
        for arguments in commands {
            let run = LogTool.runCapturing(arguments: arguments)
            let shown = "logtool \(arguments.first ?? ""): exit \(run.status)\n\(run.stdout)\n\(run.stderr)"
            #expect(Self.forbidden(run.stdout, tabs: arguments.first == "inspect").isEmpty, "\(TerminalText.escape(shown))")
            #expect(Self.forbidden(run.stderr, tabs: false).isEmpty, "\(TerminalText.escape(shown))")
            // No output line is the forged one.
            #expect(!(run.stdout + run.stderr).split(separator: "\n").contains { $0.hasPrefix("0 errors") }, "\(TerminalText.escape(shown))")
            if (run.stdout + run.stderr).contains(#"\x1b]0;owned\x07\x1b[2J\x1b[31m\x0d\x0a0 errors\x7f\u009b1m"#) { sawName = true }
        }
        // The names were shown, escaped, not left out.
        #expect(sawName)
        let verify = LogTool.runCapturing(arguments: ["verify", root.path])
        #expect(verify.stdout.contains(#"Ensemble E\x1b]0;owned\x07"#))
        // The name that is not UTF-8: its byte shown by cloud-layout.md 7 rule 0, then escaped.
        #expect(verify.stdout.contains(#"data/bad\\xFF\x1bname"#), "\(TerminalText.escape(verify.stdout))")
        let merge = LogTool.runCapturing(arguments: ["merge", root.path])
        #expect(merge.stderr.contains(#"misses revision "#))
        #expect(merge.stderr.contains(#"store="S\u001b]0;owned\u0007\u001b[2J\u001b[31m\r\n0 errors\u007f\u009b1m""#), "\(merge.stderr)")
    }

    @Test("inspect STORE.sqlite escapes the entity names of Z_PRIMARYKEY")
    func store() throws {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let store = scratch.appendingPathComponent("App.sqlite")
        try FileManager.default.copyItem(at: Run.packageRoot.appendingPathComponent("Fixtures/external/coredata-sqlite/kik.sqlite"), to: store)
        var handle: OpaquePointer?
        try #require(sqlite3_open(store.path, &handle) == SQLITE_OK)
        // Every entity name gets the hostile text: char(27) is ESC, char(7) BEL, char(13) CR, char(10) LF.
        let sql = "UPDATE Z_PRIMARYKEY SET Z_NAME = Z_NAME || char(27) || ']0;owned' || char(7) || char(13) || char(10) || '0 errors' || char(127) || char(155)"
        try #require(sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK)
        // Closed before the store is read: inspect opens it immutable, without a write-ahead log.
        try #require(sqlite3_close(handle) == SQLITE_OK)
        let run = LogTool.runCapturing(arguments: ["inspect", store.path])
        #expect(Self.forbidden(run.stdout, tabs: false).isEmpty, "\(TerminalText.escape(run.stdout))")
        #expect(Self.forbidden(run.stderr, tabs: false).isEmpty)
        #expect(run.stdout.contains(#"\x1b]0;owned\x07\x0d\x0a0 errors\x7f\u009b"#), "\(TerminalText.escape(run.stdout))")
        #expect(!run.stdout.split(separator: "\n").contains { $0.hasPrefix("0 errors") })
    }

    @Test("the built logtool writes no control character of a name either")
    func binary() throws {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let (root, _, _) = try Self.folder(in: scratch)
        for command in ["verify", "inspect", "repair"] {
            let run = try HostileFolderTests.run([command, root.path], errorsToo: true)
            #expect(!run.timedOut)
            #expect(Self.forbidden(run.stdout, tabs: command == "inspect").isEmpty, "\(TerminalText.escape(run.stdout))")
            #expect(run.stdout.contains(#"\x1b]0;owned\x07"#))
        }
    }
}
