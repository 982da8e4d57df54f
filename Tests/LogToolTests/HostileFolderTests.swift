import Foundation
import Testing
import JSONDocument

/// Hostile folders (issue 14): special files, a file swapped for a link while the folder is
/// read, destinations inside the source, temporary folders of interrupted writers.
@Suite("Hostile folders")
struct HostileFolderTests {
    /// Runs `logtool` and stops it after `seconds`: a command that hangs fails the test instead
    /// of the suite.
    /// `launcher` runs the binary another way (as another user); `errorsToo` reads standard
    /// error with standard output.
    static func run(
        _ arguments: [String], in directory: URL = Run.packageRoot, seconds: Double = 30, launcher: [String] = [Run.binary.path], errorsToo: Bool = false
    ) throws -> (status: Int32, stdout: String, timedOut: Bool) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: launcher[0])
        process.arguments = Array(launcher.dropFirst()) + arguments
        process.currentDirectoryURL = directory
        let out = Pipe()
        process.standardOutput = out
        process.standardError = errorsToo ? out : FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(seconds)
        var timedOut = false
        let reader = DispatchQueue.global()
        nonisolated(unsafe) var data = Data()
        let group = DispatchGroup()
        reader.async(group: group) { data = out.fileHandleForReading.readDataToEndOfFile() }
        while process.isRunning {
            if Date() > deadline {
                timedOut = true
                process.terminate()
                break
            }
            Thread.sleep(forTimeInterval: 0.01)
        }
        process.waitUntilExit()
        group.wait()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self), timedOut)
    }

    static func copyFixture(to scratch: URL) throws -> URL {
        let ensemble = scratch.appendingPathComponent("E")
        try FileManager.default.copyItem(at: Run.packageRoot.appendingPathComponent("Fixtures/merge/baseline-covers/cloud/E"), to: ensemble)
        try FileManager.default.createDirectory(at: ensemble.appendingPathComponent("data"), withIntermediateDirectories: true)
        return ensemble
    }

    @Test("FIFOs and sockets in every subfolder are debris, never opened: no command hangs")
    func specialFiles() throws {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let ensemble = try Self.copyFixture(to: scratch)
        var special: [String] = []
        for (folder, name) in [("stores", "FIFO-STORE"), ("events", "9_FIFO_0.cdeevent.x"), ("baselines", "7_FIFO_F1.cdeevent"), ("data", "FIFODATA")] {
            #expect(mkfifo(ensemble.appendingPathComponent("\(folder)/\(name)").path, 0o644) == 0)
            special.append("\(folder)/\(name)")
        }
        for (folder, name) in [("stores", "SOCKET"), ("data", "SOCKETDATA")] {
            let path = ensemble.appendingPathComponent("\(folder)/\(name)").path
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                for (index, byte) in path.utf8.prefix(raw.count - 1).enumerated() { raw[index] = byte }
            }
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            #expect(bound == 0)
            close(fd)
            special.append("\(folder)/\(name)")
        }
        for arguments in [
            ["inspect", ensemble.path], ["verify", ensemble.path], ["merge", ensemble.path],
            ["convert", ensemble.path, scratch.appendingPathComponent("converted").path],
            ["rebase", ensemble.path, "--out", scratch.appendingPathComponent("rebased").path],
        ] {
            let result = try Self.run(arguments)
            #expect(!result.timedOut, "\(arguments[0]) hung on a special file")
            #expect(result.status == 0, "\(arguments[0]): \(result.status)")
        }
        let report = try JSONParser.parse(Array(try Self.run(["inspect", "--json", ensemble.path]).stdout.utf8))
        let debris = report[JSONPointer(["ensembles", "0", "debris"])]?.arrayValue ?? []
        for path in special {
            let entry = debris.first { $0[JSONPointer(["path"])] == .string(path) }
            #expect(entry?[JSONPointer(["kind"])] == .string("unknownEntry"), "\(path)")
        }
    }

    @Test("an event file swapped for a link to an outside file while merging is never followed")
    func symlinkSwap() throws {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let ensemble = try Self.copyFixture(to: scratch)
        let events = ensemble.appendingPathComponent("events")
        let victim = try #require(try FileManager.default.contentsOfDirectory(atPath: events.path).filter { $0.hasSuffix(".cdeevent") }.sorted().last)
        let original = try Data(contentsOf: events.appendingPathComponent(victim))
        // The same event, with an object that exists only outside the folder.
        let outsideText = String(decoding: original, as: UTF8.self)
            .replacingOccurrences(of: #""changesByEntity":{"#, with: #""changesByEntity":{"Outside":[{"globalIdentifier":"OUTSIDE-OBJECT","type":100}],"#)
        #expect(outsideText != String(decoding: original, as: UTF8.self))
        let outside = scratch.appendingPathComponent("outside.cdeevent")
        try Data(outsideText.utf8).write(to: outside)
        let stop = ManagedAtomicFlag()
        let swapper = Thread {
            let target = events.appendingPathComponent(victim).path
            let spare = events.appendingPathComponent(".spare").path
            while !stop.isSet {
                unlink(spare)
                symlink(outside.path, spare)
                rename(spare, target)
                unlink(spare)
                _ = FileManager.default.createFile(atPath: spare, contents: original)
                rename(spare, target)
            }
        }
        swapper.start()
        defer { stop.set() }
        for _ in 0..<40 {
            let result = try Self.run(["merge", ensemble.path])
            #expect(!result.stdout.contains("OUTSIDE-OBJECT"), "a merge printed an object from outside the folder")
        }
        stop.set()
        Thread.sleep(forTimeInterval: 0.05)
    }

    @Test("the events folder swapped for a link to an outside folder while merging is never followed")
    func folderSwap() throws {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let ensemble = try Self.copyFixture(to: scratch)
        let events = ensemble.appendingPathComponent("events")
        // An outside copy of events/ whose every event also inserts an object that exists only there.
        let outside = scratch.appendingPathComponent("outside-events")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        for name in try FileManager.default.contentsOfDirectory(atPath: events.path) where name.hasSuffix(".cdeevent") {
            let text = String(decoding: try Data(contentsOf: events.appendingPathComponent(name)), as: UTF8.self)
                .replacingOccurrences(of: #""changesByEntity":{"#, with: #""changesByEntity":{"Outside":[{"globalIdentifier":"OUTSIDE-\#(name)","type":100}],"#)
            try Data(text.utf8).write(to: outside.appendingPathComponent(name))
        }
        let real = ensemble.appendingPathComponent(".events-real").path
        let link = ensemble.appendingPathComponent(".events-link").path
        let stop = ManagedAtomicFlag()
        let swapper = Thread {
            // events/ is the real folder or a link to the outside one, in turn, as fast as possible.
            while !stop.isSet {
                symlink(outside.path, link)
                rename(events.path, real)
                rename(link, events.path)
                Thread.sleep(forTimeInterval: 0.0005)
                rename(events.path, link)
                rename(real, events.path)
                unlink(link)
                Thread.sleep(forTimeInterval: 0.0005)
            }
        }
        swapper.start()
        defer { stop.set() }
        for _ in 0..<40 {
            let result = try Self.run(["merge", ensemble.path])
            #expect(!result.stdout.contains("OUTSIDE-"), "a merge printed an object from outside the folder")
        }
        stop.set()
        Thread.sleep(forTimeInterval: 0.05)
    }

    @Test("a folder that cannot be read is a read error naming it, never an empty folder", arguments: ["events", "stores", "data", "baselines"])
    func unreadableFolder(folder: String) throws {
        let scratch = try scratchDirectory()
        defer {
            chmod(scratch.appendingPathComponent("E/\(folder)").path, 0o755)
            try? FileManager.default.removeItem(at: scratch)
        }
        let ensemble = try Self.copyFixture(to: scratch)
        // Root reads every folder, so the tool runs as an unprivileged user there (setpriv), from a
        // copy of the binary that user may execute.
        var command = [Run.binary.path]
        if getuid() == 0 {
            let binary = scratch.appendingPathComponent("logtool")
            try FileManager.default.copyItem(at: Run.binary, to: binary)
            chmod(scratch.path, 0o755)
            command = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", binary.path]
        }
        #expect(chmod(ensemble.appendingPathComponent(folder).path, 0) == 0)
        for subcommand in ["merge", "verify", "inspect"] {
            let (status, text, _) = try Self.run([subcommand, ensemble.path], launcher: command, errorsToo: true)
            #expect(status == 1, "\(subcommand): \(text.prefix(400))")
            #expect(text.contains("cannot be read"), "\(subcommand) names the reason: \(text.prefix(400))")
            #expect(text.contains(folder), "\(subcommand) names the folder")
        }
    }

    @Test("names that are not UTF-8 are debris shown byte for byte, never decoded lossily into one name")
    func nonUTF8Names() throws {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let ensemble = try Self.copyFixture(to: scratch)
        func create(_ relative: [UInt8]) {
            let path = Array(ensemble.path.utf8) + [UInt8(ascii: "/")] + relative + [0]
            let descriptor = path.withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_CREAT | O_WRONLY, 0o644) }
            }
            #expect(descriptor >= 0)
            _ = write(descriptor, "x", 1)
            close(descriptor)
        }
        // Two data files whose names differ only in a byte that is not UTF-8, and an event file.
        create(Array("data/AB".utf8) + [0xFE])
        create(Array("data/AB".utf8) + [0xFF])
        create(Array("events/9_A_9".utf8) + [0xC3] + Array(".cdeevent".utf8))
        let result = try Self.run(["inspect", "--json", ensemble.path])
        #expect(result.status == 0)
        let report = try JSONParser.parse(Array(result.stdout.utf8))
        let debris = report[JSONPointer(["ensembles", "0", "debris"])]?.arrayValue ?? []
        for path in [#"data/AB\xFE"#, #"data/AB\xFF"#, #"events/9_A_9\xC3.cdeevent"#] {
            let entry = debris.first { $0[JSONPointer(["path"])] == .string(path) }
            #expect(entry?[JSONPointer(["kind"])] == .string("unknownName"), "\(path) in \(result.stdout.prefix(800))")
        }
        #expect(!result.stdout.contains("\u{FFFD}"), "no name decoded with a replacement character")
    }

    @Test("a destination inside the source is refused, by name, by .. and through a link", arguments: ["E/converted", "E/../E/converted", "link/converted"])
    func destinationInsideSource(destination: String) throws {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let ensemble = try Self.copyFixture(to: scratch)
        try FileManager.default.createSymbolicLink(atPath: scratch.appendingPathComponent("link").path, withDestinationPath: ensemble.path)
        let before = try FileManager.default.subpathsOfDirectory(atPath: ensemble.path).sorted()
        let convert = try Self.run(["convert", "E", destination], in: scratch)
        #expect(convert.status == 2)
        let rebase = try Self.run(["rebase", "E", "--out", destination], in: scratch)
        #expect(rebase.status == 2)
        #expect(try FileManager.default.subpathsOfDirectory(atPath: ensemble.path).sorted() == before)
    }

    @Test("a file over the size limit is refused from its size, with the code its first bytes call for", arguments: [true, false])
    func hugeFile(binary: Bool) throws {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let file = scratch.appendingPathComponent("huge.cdeevent")
        // Sparse: 300 MiB that take no space and must not be read.
        try Data(binary ? [0x89, 0x45, 0x4E, 0x53, 0x0D, 0x0A, 0x1A, 0x0A] : Array("{".utf8)).write(to: file)
        let handle = try FileHandle(forWritingTo: file)
        try handle.truncate(atOffset: 300 * 1024 * 1024)
        try handle.close()
        let result = try Self.run(["inspect", "--json", file.path], seconds: 10)
        #expect(!result.timedOut)
        #expect(result.status == 1)
        #expect(result.stdout.contains(binary ? "binary.too-large" : "json.too-large"), "\(result.stdout.prefix(300))")
    }

    @Test(
        "a data file over its size limit is blob.too-large from its size alone, never read (Spec/data-blobs.md 4)",
        arguments: [(true, Int64(1 << 30) + 51), (false, Int64(1 << 30) + 1)])
    func hugeDataFile(container: Bool, size: Int64) throws {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let ensemble = try Self.copyFixture(to: scratch)
        // Sparse: over a gigabyte that takes no space; reading it whole would take seconds and gigabytes.
        let file = ensemble.appendingPathComponent("data/HUGE")
        try Data(container ? [0x89, 0x45, 0x4E, 0x42, 0x0D, 0x0A, 0x1A, 0x0A, 1, 0] : Array("raw".utf8)).write(to: file)
        let handle = try FileHandle(forWritingTo: file)
        try handle.truncate(atOffset: UInt64(size))
        try handle.close()
        let result = try Self.run(["verify", "--json", ensemble.path], seconds: 10)
        #expect(!result.timedOut)
        let report = try JSONParser.parse(Array(result.stdout.utf8))
        let diagnostics = report[JSONPointer(["ensembles", "0", "diagnostics"])]?.arrayValue ?? []
        let finding = diagnostics.first {
            $0[JSONPointer(["files"])] == .array([.string("data/HUGE")]) && $0[JSONPointer(["code"])] == .string("verify.unreadable-file")
        }
        #expect(finding?[JSONPointer(["details", "cause"])] == .string("blob.too-large"), "\(result.stdout.prefix(600))")
    }

    @Test("convert --blob-container of highly compressible content reads back: the writer keeps the reader's ratio rule")
    func compressibleBlobConverts() throws {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let ensemble = try Self.copyFixture(to: scratch)
        // One MiB of zeros deflates to about a kilobyte: over the 1000x ratio a reader accepts.
        try Data(count: 1 << 20).write(to: ensemble.appendingPathComponent("data/ZEROS"))
        let destination = scratch.appendingPathComponent("converted")
        let result = try Self.run(["convert", "--blob-container", ensemble.path, destination.path], seconds: 60)
        #expect(result.status == 0, "\(result.stdout.prefix(600))")
        let written = try Data(contentsOf: destination.appendingPathComponent("data/ZEROS"))
        #expect(written.starts(with: [0x89, 0x45, 0x4E, 0x42]), "written in a container")
        #expect(written[9] == 0, "stored, not deflated: deflating would exceed the ratio rule")
    }

    @Test("the temporary folder an interrupted writer leaves in a root is not a second ensemble")
    func stagingFolderInRoot() throws {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let ensemble = try Self.copyFixture(to: scratch)
        try FileManager.default.copyItem(at: ensemble, to: scratch.appendingPathComponent(".converted.partial-0F8E6C3A"))
        let result = try Self.run(["merge", scratch.path])
        #expect(result.status == 0)
    }
}

/// A flag one thread sets and another reads.
final class ManagedAtomicFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool {
        lock.lock()
        defer { lock.unlock() }
        return value
    }
    func set() {
        lock.lock()
        value = true
        lock.unlock()
    }
}
