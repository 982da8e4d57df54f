import Foundation
import Testing
import JSONDocument
@testable import RemoteFolder

/// `scripts/ensembles-server-stub.py` on 127.0.0.1 with an ephemeral port (standard library
/// only, so always there); it exits when the test process closes its standard input.
final class EnsemblesServerStub: @unchecked Sendable {
    let process = Process()
    private let input = Pipe()
    let port: Int

    init(_ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", Run.packageRoot.appendingPathComponent("scripts/ensembles-server-stub.py").path] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = input
        process.standardError = FileHandle.nullDevice
        try process.run()
        var line = Data()
        while let byte = try output.fileHandleForReading.read(upToCount: 1), let first = byte.first, first != 0x0A { line.append(first) }
        guard let port = Int(String(decoding: line, as: UTF8.self)) else {
            kill(process.processIdentifier, SIGKILL)
            throw LoopbackServer.ServerFailed(arguments: arguments)
        }
        self.port = port
    }

    deinit {
        try? input.fileHandleForWriting.close()
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}

/// Folders read through the Ensembles Server protocol (Spec/remote.md 12), against the stub
/// serving copies of golden folders. One server for the suite.
@Suite("Remote folders (Ensembles Server)", .serialized)
struct EnsemblesServerTests {
    static let user = "me@example.com"
    static let password = "pa:ss wörd"

    /// Copies of a few merge cases, verify's healthy folder, and a folder for unsafe names.
    static let served: URL = {
        let root = ProcessScratch.path("ensembles-served")
        let manager = FileManager.default
        try? manager.createDirectory(at: root.appendingPathComponent("merge"), withIntermediateDirectories: true)
        for (name, folder, _) in cases where name.hasPrefix("merge/") {
            try? manager.copyItem(at: folder, to: root.appendingPathComponent(name))
        }
        try? manager.createDirectory(at: root.appendingPathComponent("verify"), withIntermediateDirectories: true)
        try? manager.copyItem(at: Run.packageRoot.appendingPathComponent("Fixtures/verify/healthy"), to: root.appendingPathComponent("verify/healthy"))
        let events = root.appendingPathComponent("unsafe/cloud/E/events")
        try? manager.createDirectory(at: events, withIntermediateDirectories: true)
        try? Data("kept".utf8).write(to: events.appendingPathComponent("1_S_0.cdeevent"))
        try? Data("moved".utf8).write(to: events.appendingPathComponent("redirected"))
        for folder in ["stores", "data", "baselines"] {
            try? manager.createDirectory(at: root.appendingPathComponent("failing/E/\(folder)"), withIntermediateDirectories: true)
        }
        // Downloads that fail (the stub's --drop, --stall, --fail), beside one that does not.
        let downloads = root.appendingPathComponent("downloads/E/events")
        try? manager.createDirectory(at: downloads, withIntermediateDirectories: true)
        for name in ["1_S_0.cdeevent", "dropped", "stalled", "failed"] {
            try? Data(repeating: 0x78, count: 100).write(to: downloads.appendingPathComponent(name))
        }
        // A folder whose listing the stub fills with 10,000 names (--many).
        try? manager.createDirectory(at: root.appendingPathComponent("many/E/events"), withIntermediateDirectories: true)
        return root
    }()

    static let stub: EnsemblesServerStub? = try? EnsemblesServerStub([
        served.path, "--user", user, "--password", password,
        "--inject", "/unsafe/cloud/E/events", "..",
        "--inject", "/unsafe/cloud/E/events", "../../escaped",
        "--inject", "/unsafe/cloud", ".logtool-fetch.json/",
        "--redirect", "redirected",
        "--malformed", "/failing/E/stores",
        "--refuse", "/failing/E/data",
        "--status", "/failing/E/baselines", "500",
        "--many", "/many/E/events", "10000",
        "--drop", "dropped", "--stall", "stalled", "--fail", "failed",
    ])

    static func url(_ path: String) -> String { "http://127.0.0.1:\(stub?.port ?? 1)/\(path)" }

    static let credentials = ["LOGTOOL_REMOTE_USER": user, "LOGTOOL_REMOTE_PASSWORD": password]

    /// Five golden merge cases that read `cloud`, and verify's healthy folder through inspect,
    /// verify, timeline and merge: a sample of the WebDAV suite's cases, enough to cover every
    /// command and folder shape at a few seconds' cost.
    static let cases: [(name: String, folder: URL, arguments: [String])] = {
        let merge = RemoteFolderTests.sameOutputCases.filter { $0.name.hasPrefix("merge/") && $0.arguments.contains("cloud") }
        let chosen = ["merge/baseline-covers", "merge/concurrent-updates-3-stores", "merge/data-file-and-multipart"]
        var result = merge.filter { chosen.contains($0.name) }
        result += RemoteFolderTests.sameOutputCases.filter { $0.name == "verify/healthy" }
        return result
    }()

    @Test("inspect, verify, merge and timeline of the server's folder print what they print for the local folder")
    func sameOutputAsLocal() throws {
        _ = try #require(Self.stub)
        #expect(Self.cases.count >= 8)
        let failures = FailureList()
        let cases = Self.cases
        DispatchQueue.concurrentPerform(iterations: cases.count) { index in
            let (name, folder, arguments) = cases[index]
            var remote = arguments.map { $0 == "cloud" ? Self.url(name + "/cloud") : $0 }
            remote.insert(contentsOf: ["--protocol", "ensembles-server"], at: 1)
            do {
                let local = try RemoteFolderTests.run(arguments, in: folder)
                var viaURL = try RemoteFolderTests.run(remote, in: folder, environment: Self.credentials)
                let url = Self.url(name + "/cloud")
                viaURL.stdout = viaURL.stdout.replacingOccurrences(of: url, with: "cloud")
                viaURL.stderr = viaURL.stderr.replacingOccurrences(of: url, with: "cloud")
                if local.status != viaURL.status || local.stdout != viaURL.stdout || local.stderr != viaURL.stderr {
                    failures.add("\(name) \(arguments): status \(local.status) / \(viaURL.status)\nlocal: \(local.stderr)\nURL: \(viaURL.stderr)")
                }
            } catch {
                failures.add("\(name): \(error)")
            }
        }
        #expect(failures.list.isEmpty, "\(failures.list.joined(separator: "\n\n"))")
    }

    @Test("fetch copies every file with the date the download gave; a second fetch keeps them; the manifest holds no secret")
    func fetch() throws {
        _ = try #require(Self.stub)
        let source = Self.served.appendingPathComponent("verify/healthy/cloud")
        let files = try RemoteFolderTests.files(under: source)
        for (index, file) in files.enumerated() {
            let date = Date(timeIntervalSince1970: 1_500_000_000 + Double(index) * 7_207)
            try FileManager.default.setAttributes([.modificationDate: date], ofItemAtPath: source.appendingPathComponent(file).path)
        }
        let scratch = try RemoteFolderTests.scratch()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let passwordFile = scratch.appendingPathComponent("pw")
        try Data((Self.password + "\n").utf8).write(to: passwordFile)
        let snapshot = scratch.appendingPathComponent("snapshot")
        let url = Self.url("verify/healthy/cloud")
        let arguments = ["fetch", "--protocol", "ensembles-server", "--remote-password-file", passwordFile.path, url, snapshot.path]
        let environment = ["LOGTOOL_REMOTE_USER": Self.user]

        let first = try RemoteFolderTests.run(arguments, environment: environment)
        #expect(first.status == 0, "\(first.stderr)")
        let bytes = try RemoteFolderTests.bytes(under: source, files)
        #expect(first.stdout == "\(files.count) files listed: \(files.count) fetched (\(bytes) bytes), 0 already current, 0 removed; 0 problems\n")
        #expect(try RemoteFolderTests.files(under: snapshot) == files)
        for file in files {
            let original = source.appendingPathComponent(file), copy = snapshot.appendingPathComponent(file)
            #expect(try Data(contentsOf: copy) == Data(contentsOf: original), "\(file)")
            #expect(try RemoteFolderTests.modified(copy) == RemoteFolderTests.modified(original), "\(file)")
        }
        let text = try String(contentsOf: snapshot.appendingPathComponent(".logtool-fetch.json"), encoding: .utf8)
        let manifest = try JSONParser.parse(text)
        #expect(manifest[JSONPointer(["protocol"])]?.stringValue == "ensembles-server")
        #expect(manifest[JSONPointer(["complete"])] == .bool(true))
        let first0 = manifest[JSONPointer(["files", "0"])]
        #expect(first0?[JSONPointer(["size"])]?.numberValue?.description == String(try Data(contentsOf: source.appendingPathComponent(files[0])).count))
        #expect(first0?[JSONPointer(["lastModified"])]?.stringValue == "2017-07-14T02:40:00Z")
        // Neither the password, the Basic header's text nor a presigned URL's signature.
        for secret in [Self.password, Data("\(Self.user):\(Self.password)".utf8).base64EncodedString(), "signature", "/blob"] {
            #expect(!text.contains(secret) && !first.stdout.contains(secret) && !first.stderr.contains(secret), "\(secret)")
        }

        let second = try RemoteFolderTests.run(arguments, environment: environment)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stdout == "\(files.count) files listed: 0 fetched (0 bytes), \(files.count) already current, 0 removed; 0 problems\n")
        // A file lost from the snapshot, and one cut short, are fetched again.
        try FileManager.default.removeItem(at: snapshot.appendingPathComponent(files[1]))
        try Data("x".utf8).write(to: snapshot.appendingPathComponent(files[2]))
        let third = try RemoteFolderTests.run(arguments, environment: environment)
        #expect(third.stdout.hasPrefix("\(files.count) files listed: 2 fetched ("), "\(third.stdout)")
        #expect(try Data(contentsOf: snapshot.appendingPathComponent(files[2])) == Data(contentsOf: source.appendingPathComponent(files[2])))
    }

    @Test("a wrong password, and none, are remote.authentication-failed; the password is never printed")
    func authentication() throws {
        _ = try #require(Self.stub)
        for environment in [["LOGTOOL_REMOTE_USER": Self.user, "LOGTOOL_REMOTE_PASSWORD": "wrong-guess"], [:]] {
            let output = try RemoteFolderTests.run(["verify", "--protocol", "ensembles-server", Self.url("verify/healthy/cloud")], environment: environment)
            #expect(output.status == 2)
            #expect(output.stderr.contains("remote.authentication-failed"), "\(output.stderr)")
            #expect(!output.stderr.contains("wrong-guess") && !output.stdout.contains("wrong-guess"))
        }
    }

    @Test(
        "a listing that is not JSON, one that says it failed, and a folder the server lacks: named, exit 2",
        arguments: [
            ("failing/E/stores", "remote.malformed-listing", "not a JSON object"),
            ("failing/E/data", "remote.server-error", "the bucket is unavailable"),
            ("failing/nowhere", "remote.server-error", "does not exist"),
            ("failing/E/baselines", "remote.http-status", "/listdir answered 500"),
        ])
    func listingFailures(path: String, code: String, message: String) throws {
        _ = try #require(Self.stub)
        let output = try RemoteFolderTests.run(["inspect", "--protocol", "ensembles-server", Self.url(path)], environment: Self.credentials)
        #expect(output.status == 2)
        #expect(output.stderr.contains(code) && output.stderr.contains(message), "\(output.stderr)")
    }

    @Test("presigned downloads dropped mid-body, stalled and answered 500: each named with its code, exit 1, the other file fetched")
    func downloadFailures() throws {
        _ = try #require(Self.stub)
        let scratch = try RemoteFolderTests.scratch()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let snapshot = scratch.appendingPathComponent("snapshot")
        let started = Date()
        let output = try RemoteFolderTests.run(
            ["fetch", "--protocol", "ensembles-server", "--remote-timeout", "1", Self.url("downloads/E"), snapshot.path], environment: Self.credentials)
        #expect(Date().timeIntervalSince(started) < 5)
        #expect(output.status == 1, "\(output.stderr)")
        #expect(output.stdout == "4 files listed: 1 fetched (100 bytes), 0 already current, 0 removed; 3 problems\n", "\(output.stdout)")
        let lines = output.stderr.split(separator: "\n").map(String.init)
        #expect(lines.count == 3, "\(output.stderr)")
        for prefix in ["remote.connection events/dropped: ", "remote.timeout events/stalled: ", "remote.http-status events/failed: GET answered 500"] {
            #expect(lines.contains { $0.hasPrefix(prefix) }, "\(prefix): \(output.stderr)")
        }
        #expect(!output.stderr.contains("/blob") && !output.stderr.contains("signature"))
        #expect(try RemoteFolderTests.files(under: snapshot, hidden: true) == [".logtool-fetch.json", "events/1_S_0.cdeevent"])
    }

    @Test("a listdir answer of 10,000 names: every one listed, no fileexists asked for them")
    func tenThousandNames() throws {
        _ = try #require(Self.stub)
        let location = try RemoteLocation(Self.url("many/E/events"), protocolName: "ensembles-server")
        let snapshot = RemoteSnapshot(
            location: location, options: .init(timeout: 10, credentials: RemoteCredentials(user: Self.user, password: Self.password)))
        let transport = HTTPTransport(idleTimeout: 10, totalTimeout: 200, credentials: nil, displayName: location.display)
        var report = RemoteSnapshot.Report()
        let (entries, problems) = try snapshot.list(transport, report: &report)
        #expect(problems.isEmpty, "\(problems)")
        #expect(entries.map(\.relative) == (0..<10_000).map { String(format: "f%05d", $0) })
        #expect(entries.allSatisfy { $0.size == nil && $0.source == nil })
    }

    @Test("presigned URLs followed: absolute https (http only from an http folder), with a host, without credentials")
    func downloadURLs() throws {
        let secure = RemoteSnapshot(location: try RemoteLocation("https://sync.example.com/E", protocolName: "ensembles-server"), options: .init())
        #expect(secure.downloadURL("https://bucket.s3.amazonaws.com/k?X-Amz-Signature=1") != nil)
        #expect(secure.downloadURL("http://bucket.s3.amazonaws.com/k") == nil)
        #expect(secure.downloadURL("/relative/k") == nil)
        #expect(secure.downloadURL("https://u:p@bucket.example.com/k") == nil)
        #expect(secure.downloadURL("file:///etc/passwd") == nil)
        let plain = RemoteSnapshot(location: try RemoteLocation("http://127.0.0.1:9/E", protocolName: "ensembles-server"), options: .init())
        #expect(plain.downloadURL("http://127.0.0.1:9/blob?path=x") != nil)
    }

    @Test("`..` and names with `/` never escape the snapshot; a presigned URL's redirect is refused; the other files are fetched")
    func unsafeNamesAndRedirects() throws {
        _ = try #require(Self.stub)
        let scratch = try RemoteFolderTests.scratch()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let snapshot = scratch.appendingPathComponent("snapshot")
        let output = try RemoteFolderTests.run(
            ["fetch", "--protocol", "ensembles-server", Self.url("unsafe/cloud"), snapshot.path], environment: Self.credentials)
        #expect(output.status == 1, "\(output.stderr)")
        #expect(output.stdout == "2 files listed: 1 fetched (4 bytes), 0 already current, 0 removed; 4 problems\n", "\(output.stdout)")
        for expected in [
            "E/events/..", "E/events/../../escaped", ".logtool-fetch.json", "remote.unsafe-name", "E/events/redirected", "remote.redirect-refused",
        ] {
            #expect(output.stderr.contains(expected), "\(expected): \(output.stderr)")
        }
        #expect(try RemoteFolderTests.files(under: snapshot) == ["E/events/1_S_0.cdeevent"])
        // Nothing beside the snapshot, nothing above it.
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path) == ["snapshot"])
        #expect(!FileManager.default.fileExists(atPath: scratch.deletingLastPathComponent().appendingPathComponent("escaped").path))
    }

    @Test("repair --apply refuses the server's folder")
    func repairApplyRefused() throws {
        let output = try RemoteFolderTests.run(
            ["repair", "--apply", "--quarantine", "q", "--protocol", "ensembles-server", "https://sync.example.com/E"], environment: Self.credentials)
        #expect(output.status == 2)
        #expect(output.stderr.contains("remote.read-only"), "\(output.stderr)")
    }

    @Test("URLs: the protocol of http(s), webdav:// refused with it; endpoints at the origin, cloud paths from the URL's path")
    func locations() throws {
        let location = try RemoteLocation("https://sync.example.com:8443/My%20Ensemble", protocolName: "ensembles-server")
        #expect(location.service == .ensemblesServer)
        let snapshot = RemoteSnapshot(location: location, options: .init())
        #expect(snapshot.endpoint("listdir").absoluteString == "https://sync.example.com:8443/listdir")
        #expect(snapshot.cloudPath(["events", "1_S_0.cdeevent"]) == "/My Ensemble/events/1_S_0.cdeevent")
        #expect(snapshot.cloudPath([]) == "/My Ensemble")
        let root = try RemoteLocation("http://127.0.0.1:9/", protocolName: "ensembles-server")
        #expect(RemoteSnapshot(location: root, options: .init()).cloudPath(["E"]) == "/E")
        #expect(throws: FormatError.self) { try RemoteLocation("webdavs://sync.example.com/E", protocolName: "ensembles-server") }
        #expect(throws: FormatError.self) { try RemoteLocation("https://sync.example.com/E", protocolName: "ensembles") }
    }
}
