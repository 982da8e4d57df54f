import Foundation
import Testing

/// Commands that report on a folder read each of its files once (the system calls say so:
/// `strace` counts the opens of every event file, by any of the three calls), however many
/// reports they make of it.
@Suite("Each file read once")
struct ReadOnceTests {
    static let strace = ["/usr/bin/strace", "/bin/strace"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// How many times each `.cdeevent` file was opened while logtool ran `arguments` in `folder`.
    static func opens(_ arguments: [String], in folder: URL) throws -> [String: Int] {
        let trace = FileManager.default.temporaryDirectory.appendingPathComponent("read-once-\(UUID().uuidString).txt")
        defer { try? FileManager.default.removeItem(at: trace) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: strace ?? "strace")
        process.arguments = ["-f", "-e", "trace=openat,openat2,open", "-o", trace.path, Run.binary.path] + arguments
        process.currentDirectoryURL = folder
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        var counts: [String: Int] = [:]
        for line in try String(contentsOf: trace, encoding: .utf8).split(separator: "\n") where !line.contains("ENOENT") {
            guard let name = line.split(separator: "\"").dropFirst().first, name.hasSuffix(".cdeevent") else { continue }
            counts[String(name.split(separator: "/").last ?? ""), default: 0] += 1
        }
        return counts
    }

    @Test(
        "verify and timeline open each event file once", .enabled(if: strace != nil, "needs strace (scripts/test installs it)"),
        arguments: [["verify", "cloud"], ["timeline", "cloud", "-o", "PAGE"]])
    func once(_ arguments: [String]) throws {
        let folder = Run.packageRoot.appendingPathComponent("Fixtures/verify/healthy-with-baseline")
        let page = FileManager.default.temporaryDirectory.appendingPathComponent("read-once-\(UUID().uuidString).html")
        defer { try? FileManager.default.removeItem(at: page) }
        let counts = try Self.opens(arguments.map { $0 == "PAGE" ? page.path : $0 }, in: folder)
        #expect(counts.count == 4, "\(counts)")
        #expect(counts.values.allSatisfy { $0 == 1 }, "\(arguments[0]): \(counts)")
    }
}
