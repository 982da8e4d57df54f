import Foundation
import Testing
import JSONDocument
import LogToolCore
@testable import RemoteFolder

/// A server of `scripts/webdav-test-server.py` (or another script of `scripts/`) on 127.0.0.1
/// with an ephemeral port, ended when the object goes (or, through its standard input, when the
/// test process does). Its first line is the port, then what else the server tells, by spaces.
final class LoopbackServer: @unchecked Sendable {
    let process = Process()
    private let input = Pipe()
    let port: Int
    /// The first line's words after the port.
    let fields: [String]

    init(_ arguments: [String], script: String = "webdav-test-server.py") throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", Run.packageRoot.appendingPathComponent("scripts/\(script)").path] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = input
        process.standardError = FileHandle.nullDevice
        try process.run()
        // The first line is the port; readLine-like, byte by byte, so nothing else is waited for.
        var line = Data()
        while let byte = try output.fileHandleForReading.read(upToCount: 1), let first = byte.first, first != 0x0A { line.append(first) }
        let words = String(decoding: line, as: UTF8.self).split(separator: " ").map(String.init)
        guard let port = words.first.flatMap({ Int($0) }) else {
            kill(process.processIdentifier, SIGKILL)
            throw ServerFailed(arguments: arguments)
        }
        self.port = port
        fields = Array(words.dropFirst())
    }

    struct ServerFailed: Error, CustomStringConvertible {
        var arguments: [String]
        var description: String { "the test server did not start: \(arguments)" }
    }

    /// Closes the server's standard input (it exits at once) and kills it: SIGTERM is not
    /// enough, a child started from a test thread inherits a mask that blocks it.
    func stop() {
        try? input.fileHandleForWriting.close()
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    deinit { stop() }
}

/// Whether WsgiDAV can be started: the remote-folder tests skip without it, but not in CI.
enum WebDAVAvailability {
    static let wsgidavInstalled = pythonCanImport("wsgidav, cheroot")
}

/// Whether `python3 -c "import MODULES"` succeeds: the servers of the remote-folder tests are
/// Python packages that scripts/test installs.
func pythonCanImport(_ modules: String) -> Bool {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", "-c", "import \(modules)"]
    process.standardError = FileHandle.nullDevice
    guard (try? process.run()) != nil else { return false }
    process.waitUntilExit()
    return process.terminationStatus == 0
}

/// Failures gathered from concurrent runs (`DispatchQueue.concurrentPerform`).
final class FailureList: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [String] = []
    var list: [String] { lock.withLock { items } }
    func add(_ text: String) { lock.withLock { items.append(text) } }
}

/// Remote folders over WebDAV (Spec/remote.md): a real WsgiDAV server serving copies of golden
/// folders, and a stub of the answers WsgiDAV never gives. All on 127.0.0.1.
@Suite(
    "Remote folders (WebDAV)", .serialized,
    .enabled(
        if: WebDAVAvailability.wsgidavInstalled || ProcessInfo.processInfo.environment["CI"] != nil,
        "WsgiDAV is not installed (python3 -m pip install wsgidav==4.4.0 cheroot==11.1.2; scripts/test installs it): remote-folder tests skipped"))
struct RemoteFolderTests {
    /// What the anonymous WsgiDAV serves: copies of `Fixtures/merge` and `Fixtures/verify`.
    static let served: URL = {
        let root = ProcessScratch.path("webdav-served")
        try? FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        for folder in ["merge", "verify"] {
            try? FileManager.default.copyItem(
                at: Run.packageRoot.appendingPathComponent("Fixtures/\(folder)"), to: root.appendingPathComponent(folder))
        }
        return root
    }()

    static let server: LoopbackServer? = try? LoopbackServer(["wsgidav", served.path])
    static let stub: LoopbackServer? = try? LoopbackServer(["stub"])

    static func url(_ path: String, server: LoopbackServer? = server) -> String {
        "webdav://127.0.0.1:\(server?.port ?? 1)/\(path)"
    }

    static func scratch() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("remote-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
        return url
    }

    /// Runs logtool; `clearing` names prefixes of variables removed from its environment.
    static func run(
        _ arguments: [String], in directory: URL = Run.packageRoot, environment: [String: String] = [:], clearing: [String] = []
    ) throws
        -> Output
    {
        let process = Process()
        process.executableURL = Run.binary
        process.arguments = arguments
        process.currentDirectoryURL = directory
        var merged = ProcessInfo.processInfo.environment
        for key in ["LOGTOOL_REMOTE_USER", "LOGTOOL_REMOTE_PASSWORD"] { merged[key] = nil }
        for key in merged.keys where clearing.contains(where: { key.hasPrefix($0) }) { merged[key] = nil }
        merged.merge(environment) { $1 }
        process.environment = merged
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Standard error in the background: a command that fills both pipes must not block.
        final class Box: @unchecked Sendable { var data = Data() }
        let box = Box()
        let errHandle = err.fileHandleForReading
        let done = DispatchSemaphore(value: 0)
        Thread {
            box.data = errHandle.readDataToEndOfFile()
            done.signal()
        }.start()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        done.wait()
        process.waitUntilExit()
        return Output(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self), stderr: String(decoding: box.data, as: UTF8.self))
    }

    struct Output {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    // MARK: - The same output as the local folder

    /// Every golden merge case whose command reads `cloud…`, and verify's healthy folder with
    /// inspect, verify and timeline: the command of the URL prints what the command of the
    /// local folder prints, byte for byte, with the same exit status.
    static let sameOutputCases: [(name: String, folder: URL, arguments: [String])] = {
        var cases: [(String, URL, [String])] = []
        for testCase in MergeFixtureTests.cases {
            guard let data = try? Data(contentsOf: testCase.folder.appendingPathComponent("case.json")),
                case .object(let description)? = try? JSONParser.parse(Array(data)), case .array(let command)? = description["command"]
            else { continue }
            let arguments = command.compactMap(\.stringValue)
            guard arguments.contains(where: { $0 == "cloud" || $0.hasPrefix("cloud/") }) else { continue }
            // iCloud's duplicate folders lie beside the folder given ("cloud 2", "E 2"): a URL's
            // snapshot holds the folder alone (Spec/remote.md 5.1).
            if ["duplicate-root-copies", "device-delivery-duplicate-folder"].contains(testCase.name) { continue }
            cases.append(("merge/\(testCase.name)", testCase.folder, arguments))
        }
        let healthy = Run.packageRoot.appendingPathComponent("Fixtures/verify/healthy")
        for arguments in [
            ["inspect", "cloud"], ["inspect", "--json", "cloud"], ["verify", "cloud"], ["verify", "--json", "cloud"], ["timeline", "--json", "cloud"],
            ["merge", "cloud"],
        ] {
            cases.append(("verify/healthy", healthy, arguments))
        }
        return cases
    }()

    @Test("inspect, verify, merge and timeline of a URL print what they print for the local folder")
    func sameOutputAsLocal() throws {
        // The server starts before the runs: none of their pipes is open while it is spawned.
        _ = try #require(Self.server)
        #expect(Self.sameOutputCases.count >= 40)
        let cases = Self.sameOutputCases
        // Eight at a time: each pair of runs is independent.
        let failures = FailureList()
        DispatchQueue.concurrentPerform(iterations: cases.count) { index in
            let (name, folder, arguments) = cases[index]
            let remote = arguments.map { argument -> String in
                guard argument == "cloud" || argument.hasPrefix("cloud/") else { return argument }
                return Self.url(name + "/" + argument)
            }
            do {
                let local = try Self.run(arguments, in: folder)
                var viaURL = try Self.run(remote, in: folder)
                // Paths inside the folder are printed under the URL given (Spec/remote.md 5.1).
                for argument in arguments where argument == "cloud" || argument.hasPrefix("cloud/") {
                    var argument = argument
                    while argument.hasSuffix("/") { argument.removeLast() }
                    let url = Self.url(name + "/" + argument)
                    viaURL.stdout = viaURL.stdout.replacingOccurrences(of: url, with: argument)
                    viaURL.stderr = viaURL.stderr.replacingOccurrences(of: url, with: argument)
                }
                if local.status != viaURL.status || local.stdout != viaURL.stdout || local.stderr != viaURL.stderr {
                    failures.add(
                        "\(name) \(arguments): status \(local.status) / \(viaURL.status)\nlocal stderr: \(local.stderr)\nURL stderr: \(viaURL.stderr)\nstdout same: \(local.stdout == viaURL.stdout)"
                    )
                }
            } catch {
                failures.add("\(name): \(error)")
            }
        }
        #expect(failures.list.isEmpty, "\(failures.list.joined(separator: "\n\n"))")
    }

    // MARK: - fetch

    @Test("fetch copies every file with its date; a second fetch fetches nothing; a change, a removal and a lost file are caught up")
    func fetchKeepsDatesAndResumes() throws {
        // A folder of its own, with a different date on every file (whole seconds, in the past).
        let source = Self.served.appendingPathComponent("dated-\(UUID().uuidString)")
        try FileManager.default.copyItem(at: Run.packageRoot.appendingPathComponent("Fixtures/verify/healthy/cloud"), to: source)
        let files = try Self.files(under: source)
        #expect(files.count == 8)
        for (index, file) in files.enumerated() {
            let date = Date(timeIntervalSince1970: 1_600_000_000 + Double(index) * 3_601)
            try FileManager.default.setAttributes([.modificationDate: date], ofItemAtPath: source.appendingPathComponent(file).path)
        }
        let scratch = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let snapshot = scratch.appendingPathComponent("snapshot")
        let url = Self.url(source.lastPathComponent)

        let first = try Self.run(["fetch", url, snapshot.path])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout == "8 files listed: 8 fetched (\(try Self.bytes(under: source, files)) bytes), 0 already current, 0 removed; 0 problems\n")
        #expect(try Self.files(under: snapshot) == files)
        for file in files {
            let original = source.appendingPathComponent(file), copy = snapshot.appendingPathComponent(file)
            #expect(try Data(contentsOf: copy) == Data(contentsOf: original), "\(file)")
            #expect(try Self.modified(copy) == Self.modified(original), "\(file)")
        }
        let manifest = try JSONParser.parse(Array(Data(contentsOf: snapshot.appendingPathComponent(".logtool-fetch.json"))))
        #expect(manifest[JSONPointer(["url"])]?.stringValue == url)
        #expect(manifest[JSONPointer(["complete"])] == .bool(true))
        #expect(manifest[JSONPointer(["files"])]?.arrayValue?.compactMap { $0[JSONPointer(["path"])]?.stringValue } == files)

        let second = try Self.run(["fetch", url, snapshot.path])
        #expect(second.status == 0)
        #expect(second.stdout == "8 files listed: 0 fetched (0 bytes), 8 already current, 0 removed; 0 problems\n")

        // A run killed after one file: that file is missing and a partial file lies beside it.
        try FileManager.default.removeItem(at: snapshot.appendingPathComponent("E/events/0_ALPHA-STORE_0.cdeevent"))
        try Data("half".utf8).write(to: snapshot.appendingPathComponent("E/events/.0_ALPHA-STORE_0.cdeevent.partial-\(UUID().uuidString)"))
        // On the server: one file changed (new bytes, new date), one removed.
        let changed = source.appendingPathComponent("E/data/PHOTO-1")
        try Data("new bytes".utf8).write(to: changed)
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_700_000_000)], ofItemAtPath: changed.path)
        try FileManager.default.removeItem(at: source.appendingPathComponent("E/events/3_ALPHA-STORE_2.cdeevent"))
        let third = try Self.run(["fetch", url, snapshot.path])
        #expect(third.status == 0, "\(third.stderr)")
        #expect(third.stdout.hasPrefix("7 files listed: 2 fetched ("), "\(third.stdout)")
        #expect(third.stdout.hasSuffix("5 already current, 1 removed; 0 problems\n"), "\(third.stdout)")
        #expect(try Data(contentsOf: snapshot.appendingPathComponent("E/data/PHOTO-1")) == Data("new bytes".utf8))
        #expect(try Self.modified(snapshot.appendingPathComponent("E/data/PHOTO-1")) == 1_700_000_000)
        #expect(!FileManager.default.fileExists(atPath: snapshot.appendingPathComponent("E/events/3_ALPHA-STORE_2.cdeevent").path))
        #expect(try Self.files(under: snapshot, hidden: true).filter { $0.contains(".partial-") }.isEmpty)

        // fetch then verify equals verify of the URL.
        let fetched = try Self.run(["verify", "--json", snapshot.path])
        let direct = try Self.run(["verify", "--json", url])
        #expect(fetched.stdout == direct.stdout && fetched.status == direct.status)
    }

    @Test("fetch refuses a folder that is not a snapshot of the same URL, and writes nothing into it")
    func fetchRefusesOtherFolders() throws {
        let scratch = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: scratch) }
        try Data("mine".utf8).write(to: scratch.appendingPathComponent("notes.txt"))
        let run = try Self.run(["fetch", Self.url("verify/healthy/cloud"), scratch.path])
        #expect(run.status == 2)
        #expect(run.stderr.contains("remote.destination-not-snapshot"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path) == ["notes.txt"])
        let other = scratch.appendingPathComponent("copy")
        #expect(try Self.run(["fetch", Self.url("verify/healthy/cloud"), other.path]).status == 0)
        let again = try Self.run(["fetch", Self.url("verify/debris/cloud"), other.path])
        #expect(again.status == 2 && again.stderr.contains("remote.destination-not-snapshot"))
    }

    @Test("at most 8 requests are in flight, and more than one is")
    func inFlightBound() throws {
        let scratch = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let run = try Self.run(["fetch", Self.url("many", server: Self.stub), scratch.appendingPathComponent("many").path])
        #expect(run.status == 0, "\(run.stderr)")
        let most = try Int(String(decoding: Data(contentsOf: URL(string: "http://127.0.0.1:\(Self.stub?.port ?? 1)/most-in-flight")!), as: UTF8.self))
        #expect(most.map { $0 >= 2 && $0 <= 8 } == true, "\(String(describing: most))")
    }

    // MARK: - Credentials

    @Test("Digest and Basic authentication, from the environment or a password file; the password is never printed", arguments: [false, true])
    func authentication(basic: Bool) throws {
        let password = "pw-\(UUID().uuidString.prefix(8))"
        let server = try LoopbackServer(["wsgidav", Self.served.path, "--user", "alice", "--password", password] + (basic ? ["--basic"] : []))
        defer { server.stop() }
        let scratch = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let url = Self.url("verify/healthy/cloud", server: server)

        let anonymous = try Self.run(["fetch", url, scratch.appendingPathComponent("a").path])
        #expect(anonymous.status == 2)
        #expect(anonymous.stderr.contains("remote.http-status") && anonymous.stderr.contains("401"), "\(anonymous.stderr)")

        let wrong = try Self.run(
            ["fetch", url, scratch.appendingPathComponent("b").path], environment: ["LOGTOOL_REMOTE_USER": "alice", "LOGTOOL_REMOTE_PASSWORD": "wrong"])
        #expect(wrong.status == 2 && wrong.stderr.contains("401"))
        #expect(!wrong.stderr.contains("wrong") && !wrong.stdout.contains("wrong"))

        let environment = try Self.run(
            ["fetch", url, scratch.appendingPathComponent("c").path], environment: ["LOGTOOL_REMOTE_USER": "alice", "LOGTOOL_REMOTE_PASSWORD": password])
        #expect(environment.status == 0, "\(environment.stderr)")

        let file = scratch.appendingPathComponent("pw")
        try Data((password + "\n").utf8).write(to: file)
        let fromFile = try Self.run(["verify", "--remote-user", "alice", "--remote-password-file", file.path, url])
        #expect(fromFile.status == 0, "\(fromFile.stderr)")
        #expect(fromFile.stdout == (try Self.run(["verify", "Fixtures/verify/healthy/cloud"])).stdout)

        for run in [anonymous, wrong, environment, fromFile] { #expect(!run.stdout.contains(password) && !run.stderr.contains(password)) }
        let manifest = try String(contentsOf: scratch.appendingPathComponent("c/.logtool-fetch.json"), encoding: .utf8)
        #expect(!manifest.contains(password) && !manifest.contains("alice"))
    }

    @Test("a password without a user, and credentials inside the URL, are refused without echoing them")
    func credentialMistakes() throws {
        let noUser = try Self.run(["inspect", Self.url("verify/healthy/cloud")], environment: ["LOGTOOL_REMOTE_PASSWORD": "hunter2"])
        #expect(noUser.status == 2 && noUser.stderr.contains("remote.credentials"))
        let inURL = try Self.run(["inspect", "webdav://alice:hunter2@127.0.0.1:\(Self.server?.port ?? 1)/verify/healthy/cloud"])
        #expect(inURL.status == 2 && inURL.stderr.contains("remote.bad-url"))
        #expect(!inURL.stderr.contains("hunter2") && !noUser.stderr.contains("hunter2"))
        let noProtocol = try Self.run(["inspect", "http://127.0.0.1:\(Self.server?.port ?? 1)/verify/healthy/cloud"])
        #expect(noProtocol.status == 2 && noProtocol.stderr.contains("remote.bad-url"))
        let withProtocol = try Self.run(["inspect", "--protocol", "webdav", "http://127.0.0.1:\(Self.server?.port ?? 1)/verify/healthy/cloud"])
        #expect(withProtocol.status == 0, "\(withProtocol.stderr)")
    }

    // MARK: - Failures

    @Test(
        "a listing answered 401, 403, 404 or 500, malformed XML, or a redirect to another host stops fetch with exit 2 and its code",
        arguments: [
            ("status-401/", "remote.http-status"), ("status-403/", "remote.http-status"), ("status-404/", "remote.http-status"),
            ("status-500/", "remote.http-status"), ("malformed/", "remote.malformed-listing"), ("not-multistatus/", "remote.malformed-listing"),
            ("redirect-away/", "remote.redirect-refused"),
        ])
    func listingFailures(path: String, code: String) throws {
        let scratch = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let run = try Self.run(["fetch", Self.url(path, server: Self.stub), scratch.appendingPathComponent("copy").path])
        #expect(run.status == 2, "\(run.stderr)")
        #expect(run.stderr.hasPrefix(code + " .: "), "\(run.stderr)")
        // inspect of the URL stops the same way, having read nothing.
        let inspect = try Self.run(["inspect", Self.url(path, server: Self.stub)])
        #expect(inspect.status == 2 && inspect.stderr.contains(code) && inspect.stdout.isEmpty)
    }

    @Test("a connection dropped mid-body, a stalled body and a file above its limit: not fetched, named, exit 1, no partial file left")
    func downloadFailures() throws {
        let scratch = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: scratch) }
        for (path, code, file) in [("drop", "remote.connection", "a"), ("stall", "remote.timeout", "a"), ("big", "remote.too-large", "events/huge")] {
            let destination = scratch.appendingPathComponent(path)
            let started = Date()
            let run = try Self.run(["fetch", "--remote-timeout", "1", Self.url(path, server: Self.stub), destination.path])
            #expect(Date().timeIntervalSince(started) < 5, "\(path)")
            #expect(run.status == 1, "\(path): \(run.stderr)")
            #expect(run.stderr.hasPrefix("\(code) \(file): "), "\(path): \(run.stderr)")
            #expect(run.stdout.hasSuffix("0 fetched (0 bytes), 0 already current, 0 removed; 1 problems\n"), "\(path): \(run.stdout)")
            #expect(try Self.files(under: destination, hidden: true).filter { $0 != ".logtool-fetch.json" }.isEmpty, "\(path)")
        }
    }

    @Test("a folder of 10,000 members in one PROPFIND answer: one request, every member listed with its size and date")
    func tenThousandMembers() throws {
        let stub = try #require(Self.stub)
        let location = try RemoteLocation(Self.url("huge", server: stub), protocolName: nil)
        let snapshot = RemoteSnapshot(location: location, options: .init(timeout: 10))
        let transport = HTTPTransport(idleTimeout: 10, totalTimeout: 200, credentials: nil, displayName: location.display)
        var report = RemoteSnapshot.Report()
        let (entries, problems) = try snapshot.list(transport, report: &report)
        #expect(problems.isEmpty, "\(problems)")
        #expect(report.listingRequests == 1)
        #expect(entries.map(\.relative) == (0..<10_000).map { String(format: "f%05d", $0) })
        #expect(entries.allSatisfy { $0.size == 6 && $0.modified == Date(timeIntervalSince1970: 1_793_701_230) })
    }

    @Test("names with spaces and Unicode are fetched; `..`, `/`, NUL, overlong names and members outside the folder are named and never escape")
    func unsafeNames() throws {
        let scratch = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let destination = scratch.appendingPathComponent("names")
        for path in ["names", "redirect-here"] {
            try? FileManager.default.removeItem(at: destination)
            let run = try Self.run(["fetch", Self.url(path, server: Self.stub), destination.path])
            #expect(run.status == 1, "\(run.stderr)")
            #expect(try Self.files(under: destination) == ["with space", "ünïcode—日"], "\(path)")
            let lines = run.stderr.split(separator: "\n")
            #expect(lines.count == 9, "\(run.stderr)")
            #expect(lines.allSatisfy { $0.hasPrefix("remote.unsafe-name ") }, "\(run.stderr)")
            #expect(!run.stderr.contains("\u{0}"))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path) == ["names"])
    }

    @Test("repair --apply refuses a URL and says what to do instead")
    func repairApplyRefused() throws {
        let run = try Self.run(["repair", "--apply", "--quarantine", "/tmp/nowhere", Self.url("verify/healthy/cloud")])
        #expect(run.status == 2)
        #expect(run.stderr.hasPrefix("remote.read-only URL: "), "\(run.stderr)")
        #expect(run.stderr.contains("logtool fetch"))
    }

    // MARK: - Helpers

    static func files(under root: URL, hidden: Bool = false) throws -> [String] {
        var result: [String] = []
        guard let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey]) else { return [] }
        while let url = enumerator.nextObject() as? URL {
            guard try url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile == true else { continue }
            let relative = String(url.standardizedFileURL.path.dropFirst(root.standardizedFileURL.path.count + 1))
            if !hidden && relative.split(separator: "/").contains(where: { $0.hasPrefix(".") }) { continue }
            result.append(relative)
        }
        return result.sorted { $0.split(separator: "/").map(String.init).lexicographicallyPrecedes($1.split(separator: "/").map(String.init)) }
    }

    static func bytes(under root: URL, _ files: [String]) throws -> Int {
        try files.reduce(0) { $0 + (try Data(contentsOf: root.appendingPathComponent($1))).count }
    }

    static func modified(_ url: URL) throws -> Int64 {
        var info = stat()
        guard lstat(url.path, &info) == 0 else { return -1 }
        return Int64(info.st_mtim.tv_sec)
    }
}

/// Pieces of the WebDAV client checked against their RFCs, without a server.
@Suite("Remote folders: Digest, challenges, URLs")
struct RemoteFolderUnitTests {
    @Test("a folder-by-folder listing refuses a name twice in one folder, the manifest's name at the top and folders too deep (Spec/remote.md 3, 4.4)")
    func folderWalk() throws {
        var walk = FolderWalk()
        #expect(walk.nextFolder() == [])
        #expect(try walk.admit("events", in: []))
        #expect(try !walk.admit("events", in: []))
        #expect(try !walk.admit(RemoteSnapshot.manifestName, in: []))
        #expect(try !walk.admit("..", in: []))
        walk.addFolder(["events"])
        walk.addFolder(Array(repeating: "d", count: RemoteSnapshot.maximumDepth))
        #expect(walk.nextFolder() == ["events"])
        // The same name in another folder, and the manifest's name below the top, are listed.
        #expect(try walk.admit("events", in: ["events"]))
        #expect(try walk.admit(RemoteSnapshot.manifestName, in: ["events"]))
        #expect(walk.nextFolder() == nil)
        #expect(
            walk.problems.map(\.message) == [
                "a second member of this name: not fetched", "the manifest's own name: not fetched", "the name ..: not fetched",
                "folders nested more than \(RemoteSnapshot.maximumDepth) deep are not fetched",
            ])
    }

    @Test("HTTP dates in each form of RFC 9110 5.6.7, and the manifest's RFC 3339 times")
    func httpDates() {
        // Seconds since 1970 from Python's calendar.timegm, not from Foundation.
        for (text, seconds) in [
            ("Tue, 03 Nov 2026 10:20:30 GMT", 1_793_701_230.0), ("Sun, 06 Nov 1994 08:49:37 GMT", 784_111_777),
            ("Tue, 29 Feb 2000 23:59:59 GMT", 951_868_799), ("Thu, 01 Jan 1970 00:00:00 GMT", 0), ("Fri, 31 Dec 9999 23:59:59 GMT", 253_402_300_799),
            ("Mon, 01 Mar 2100 00:00:00 GMT", 4_107_542_400), ("Sunday, 06-Nov-94 08:49:37 GMT", 784_111_777),
            ("Sun Nov  6 08:49:37 1994", 784_111_777),
        ] {
            #expect(MultistatusReader.date(text) == Date(timeIntervalSince1970: seconds), "\(text)")
            // The IMF-fixdate form is read by hand, not by the fallback's formatters.
            if text.hasSuffix("GMT") && !text.contains("-") {
                #expect(MultistatusReader.imfFixdate(text) == Date(timeIntervalSince1970: seconds), "\(text)")
            }
        }
        for text in [
            "Tue, 31 Nov 2026 10:20:30 GMT", "Mon, 29 Feb 2100 00:00:00 GMT", "Tue, 03 Nov 2026 10:20:30 UTC", "Tue, 03 Nov 2026 25:20:30 GMT",
            "Tue, 3 Nov 2026 10:20:30 GMT",
        ] {
            #expect(MultistatusReader.imfFixdate(text) == nil, "\(text)")
        }
        #expect(RemoteSnapshot.timestamp(Date(timeIntervalSince1970: 1_793_701_230.75)) == "2026-11-03T10:20:30Z")
    }

    @Test("the Digest response of RFC 7616 3.9.1's example, MD5 and SHA-256")
    func digestExample() {
        let challenge = [
            "realm": "http-auth@example.org", "qop": "auth, auth-int", "nonce": "7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v",
            "opaque": "FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS",
        ]
        let credentials = RemoteCredentials(user: "Mufasa", password: "Circle of Life")
        for (algorithm, response) in [
            ("MD5", "8ca523f5e9506fed4657c9700eebdbec"), ("SHA-256", "753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1"),
        ] {
            var parameters = challenge
            parameters["algorithm"] = algorithm
            let header = Authenticator.digest(
                parameters, credentials: credentials, method: "GET", uri: "/dir/index.html", nonceCount: 1,
                cnonce: "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ")
            #expect(header.contains("response=\"\(response)\""), "\(algorithm): \(header)")
            #expect(header.contains("nc=00000001") && header.contains("qop=auth,"))
        }
    }

    @Test("WWW-Authenticate: several challenges in one value, quoted values with commas and escapes")
    func challenges() {
        let parsed = Authenticator.parseChallenges(#"Digest realm="a, b", nonce="n\"1", algorithm=MD5, qop="auth", Basic realm="x""#)
        #expect(parsed.map(\.name) == ["digest", "basic"])
        #expect(parsed.first?.parameters == ["realm": "a, b", "nonce": "n\"1", "algorithm": "MD5", "qop": "auth"])
        #expect(parsed.last?.parameters == ["realm": "x"])
    }

    @Test("RemoteLocation: schemes, the protocol of http(s), credentials and queries refused")
    func locations() throws {
        #expect(RemoteLocation.isRemote("webdav://h/p") && RemoteLocation.isRemote("https://h/p"))
        #expect(!RemoteLocation.isRemote("cloud") && !RemoteLocation.isRemote("./a://b") && !RemoteLocation.isRemote("/x/y"))
        #expect(try RemoteLocation("webdavs://h:8443/a%20b/c", protocolName: nil).collection.absoluteString == "https://h:8443/a%20b/c/")
        #expect(try RemoteLocation("webdav://h", protocolName: nil).collection.absoluteString == "http://h/")
        #expect(try RemoteLocation("https://h/x/", protocolName: "webdav").collection.absoluteString == "https://h/x/")
        #expect(throws: FormatError.self) { try RemoteLocation("https://h/x", protocolName: nil) }
        #expect(throws: FormatError.self) { try RemoteLocation("ftp://h/x", protocolName: nil) }
        #expect(throws: FormatError.self) { try RemoteLocation("webdav://u:p@h/x", protocolName: nil) }
        #expect(throws: FormatError.self) { try RemoteLocation("webdav://h/x?q=1", protocolName: nil) }
    }

    @Test("unsafe names (Spec/remote.md 4.4)")
    func unsafe() {
        for name in ["", ".", "..", "a/b", "a\u{0}b", String(repeating: "é", count: 128)] { #expect(RemoteSnapshot.unsafeReason(name) != nil, "\(name)") }
        for name in ["with space", "ünïcode", "...", ".hidden", String(repeating: "a", count: 255)] {
            #expect(RemoteSnapshot.unsafeReason(name) == nil, "\(name)")
        }
    }
}
