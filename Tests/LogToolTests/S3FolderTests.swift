import Foundation
import Testing
import TestSupport
import JSONDocument
import LogToolCore
@testable import RemoteFolder

/// Whether moto's server can be started: the S3 tests skip without it, but not in CI.
enum S3Availability {
    static let motoInstalled = pythonCanImport("moto.server, boto3")
}

/// Remote folders in S3 (Spec/remote.md 11): moto's server, started once, with copies of the
/// golden folders uploaded by boto3 and request signatures checked against an IAM key.
@Suite(
    "Remote folders (S3)", .serialized,
    .enabled(
        if: S3Availability.motoInstalled || ProcessInfo.processInfo.environment["CI"] != nil,
        "moto is not installed (python3 -m pip install 'moto[server]==5.2.1'; scripts/test installs it): S3 tests skipped"))
struct S3FolderTests {
    /// key -> LastModified seconds of the `dated/` copy, as boto3 lists them.
    static let datesFile = ProcessScratch.path("s3-dates.json")
    static let server: LoopbackServer? = try? LoopbackServer(
        [datesFile.path, Run.packageRoot.appendingPathComponent("Fixtures/merge").path, Run.packageRoot.appendingPathComponent("Fixtures/verify").path],
        script: "s3-test-server.py")
    static var endpoint: String { "http://127.0.0.1:\(server?.port ?? 1)" }
    static var keyID: String { server?.fields.first ?? "" }
    static var secret: String { server?.fields.dropFirst().first ?? "" }

    /// The environment of a run: the tester's key, and no AWS file of this machine.
    static var environment: [String: String] {
        ["AWS_ACCESS_KEY_ID": keyID, "AWS_SECRET_ACCESS_KEY": secret, "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent", "AWS_CONFIG_FILE": "/nonexistent"]
    }

    static func run(_ arguments: [String], in directory: URL = Run.packageRoot, environment: [String: String]? = nil) throws -> RemoteFolderTests.Output {
        try RemoteFolderTests.run(arguments + ["--endpoint-url", endpoint], in: directory, environment: environment ?? Self.environment, clearing: ["AWS_"])
    }

    /// The merge cases run by default: the suite's time is kept to seconds (the WebDAV suite
    /// runs them all through the same snapshot code); the long run (``LongRun``) and
    /// `LOGTOOL_S3_ALL_CASES=1` run every one.
    static let sampleCases: Set<String> = [
        "merge/data-file-and-multipart", "merge/device-chains", "merge/input-trailing-slashes", "merge/conflicting-copies-second-201",
        "merge/compiled-model-version-not-found", "merge/incomplete-multipart-part-read-error", "verify/healthy",
    ]

    @Test("inspect, verify, merge and timeline of an s3:// URL print what they print for the local folder")
    func sameOutputAsLocal() throws {
        _ = try #require(Self.server)
        let all = LongRun.isOn || ProcessInfo.processInfo.environment["LOGTOOL_S3_ALL_CASES"] == "1"
        let cases = RemoteFolderTests.sameOutputCases.filter { all || Self.sampleCases.contains($0.name) }
        #expect(cases.count >= (all ? 40 : 12))
        let failures = FailureList()
        DispatchQueue.concurrentPerform(iterations: cases.count) { index in
            let (name, folder, arguments) = cases[index]
            func url(_ argument: String) -> String { "s3://golden/\(name)/\(argument)" }
            let remote = arguments.map { $0 == "cloud" || $0.hasPrefix("cloud/") ? url($0) : $0 }
            do {
                let local = try RemoteFolderTests.run(arguments, in: folder)
                var viaURL = try Self.run(remote, in: folder)
                for argument in arguments where argument == "cloud" || argument.hasPrefix("cloud/") {
                    var argument = argument
                    while argument.hasSuffix("/") { argument.removeLast() }
                    viaURL.stdout = viaURL.stdout.replacingOccurrences(of: url(argument), with: argument)
                    viaURL.stderr = viaURL.stderr.replacingOccurrences(of: url(argument), with: argument)
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

    @Test("repair's plan of an s3:// URL is the local folder's")
    func repairPlan() throws {
        _ = try #require(Self.server)
        let folder = Run.packageRoot.appendingPathComponent("Fixtures/verify/revision-gap")
        let local = try RemoteFolderTests.run(["repair", "--json", "cloud"], in: folder)
        let url = "s3://golden/verify/revision-gap/cloud"
        let viaURL = try Self.run(["repair", "--json", url], in: folder)
        #expect(local.status == viaURL.status && !local.stdout.isEmpty, "\(viaURL.stderr)")
        // The plan names the folder as given: the URL, where the local plan has `cloud` (and
        // its absolute path as `cloudRoot`).
        #expect(
            local.stdout.replacingOccurrences(of: folder.appendingPathComponent("cloud").path, with: "cloud")
                == viaURL.stdout.replacingOccurrences(of: url, with: "cloud"))
    }

    @Test("fetch keeps each object's LastModified as the file's date and its bytes; a second fetch keeps everything by size and ETag")
    func fetchKeepsDates() throws {
        _ = try #require(Self.server)
        let dates = try JSONParser.parse(Array(Data(contentsOf: Self.datesFile)))
        let scratch = try RemoteFolderTests.scratch()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let snapshot = scratch.appendingPathComponent("dated")
        let local = Run.packageRoot.appendingPathComponent("Fixtures/verify/healthy/cloud")
        let files = try RemoteFolderTests.files(under: local)
        #expect(files.count == 8)
        let first = try Self.run(["fetch", "s3://golden/dated", snapshot.path])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(
            first.stdout == "8 files listed: 8 fetched (\(try RemoteFolderTests.bytes(under: local, files)) bytes), 0 already current, 0 removed; 0 problems\n")
        #expect(try RemoteFolderTests.files(under: snapshot) == files)
        var distinct: Set<Int64> = []
        for file in files {
            #expect(try Data(contentsOf: snapshot.appendingPathComponent(file)) == Data(contentsOf: local.appendingPathComponent(file)), "\(file)")
            let expected = try #require(dates[JSONPointer(["dated/" + file])]?.numberValue?.int64Value, "\(file)")
            #expect(try RemoteFolderTests.modified(snapshot.appendingPathComponent(file)) == expected, "\(file)")
            distinct.insert(expected)
        }
        #expect(distinct.count == 8)
        let manifest = try JSONParser.parse(Array(Data(contentsOf: snapshot.appendingPathComponent(".logtool-fetch.json"))))
        #expect(manifest[JSONPointer(["protocol"])]?.stringValue == "s3")
        #expect(manifest[JSONPointer(["url"])]?.stringValue == "s3://golden/dated")
        #expect(manifest[JSONPointer(["files", "0", "etag"])]?.stringValue?.hasPrefix("\"") == true)
        // The snapshot's dates changed by hand: the ETag, not the date, says the file is current.
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 0)], ofItemAtPath: snapshot.appendingPathComponent(files[0]).path)
        let second = try Self.run(["fetch", "s3://golden/dated", snapshot.path])
        #expect(second.stdout == "8 files listed: 0 fetched (0 bytes), 8 already current, 0 removed; 0 problems\n", "\(second.stderr)")
        // fetch then verify equals verify of the URL.
        let fetched = try RemoteFolderTests.run(["verify", "--json", snapshot.path])
        let direct = try Self.run(["verify", "--json", "s3://golden/dated"])
        #expect(fetched.stdout == direct.stdout && fetched.status == direct.status && direct.status == 0)
    }

    @Test("the listing follows continuation tokens page by page", arguments: [1, 3, 1000])
    func paging(pageSize: Int) throws {
        _ = try #require(Self.server)
        let scratch = try RemoteFolderTests.scratch()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let location = try RemoteLocation("s3://golden/verify/healthy/cloud/", protocolName: nil, endpointURL: Self.endpoint, region: "us-east-1")
        var options = RemoteSnapshot.Options(timeout: 10, s3Credentials: S3Credentials(accessKeyID: Self.keyID, secretAccessKey: Self.secret))
        options.s3PageSize = pageSize
        let report = try RemoteSnapshot(location: location, options: options).fetch(into: scratch.appendingPathComponent("copy"))
        #expect(report.problems.isEmpty, "\(report.problems)")
        #expect(report.listed == 8 && report.fetched == 8)
        // 8 keys: pages of 1 -> 8 pages, of 3 -> 3, of 1000 -> 1.
        #expect(report.listingRequests == (8 + pageSize - 1) / pageSize)
        #expect(
            try RemoteFolderTests.files(under: scratch.appendingPathComponent("copy"))
                == RemoteFolderTests.files(under: Run.packageRoot.appendingPathComponent("Fixtures/verify/healthy/cloud")))
    }

    @Test("a wrong secret (403 SignatureDoesNotMatch), no credentials, a missing bucket (404 NoSuchBucket): exit 2, named, no secret printed")
    func failures() throws {
        _ = try #require(Self.server)
        let scratch = try RemoteFolderTests.scratch()
        defer { try? FileManager.default.removeItem(at: scratch) }
        var wrong = Self.environment
        wrong["AWS_SECRET_ACCESS_KEY"] = "not-the-secret-\(UUID().uuidString.prefix(6))"
        let bad = try Self.run(["fetch", "s3://golden/dated", scratch.appendingPathComponent("a").path], environment: wrong)
        #expect(bad.status == 2)
        #expect(bad.stderr.hasPrefix("remote.http-status .: ListObjectsV2 answered 403 (SignatureDoesNotMatch)"), "\(bad.stderr)")
        var none = Self.environment
        none["AWS_ACCESS_KEY_ID"] = nil
        none["AWS_SECRET_ACCESS_KEY"] = nil
        // Unsigned (moto answers 500 where AWS answers 403: the hint is checked in S3UnitTests).
        let anonymous = try Self.run(["inspect", "s3://golden/dated"], environment: none)
        #expect(anonymous.status == 2 && anonymous.stderr.hasPrefix("remote.http-status .: ListObjectsV2 answered "), "\(anonymous.stderr)")
        let missing = try Self.run(["verify", "s3://no-such-bucket/x"])
        #expect(missing.status == 2 && missing.stderr.contains("404 (NoSuchBucket)"), "\(missing.stderr)")
        for run in [bad, anonymous, missing] {
            for secret in [Self.secret, wrong["AWS_SECRET_ACCESS_KEY"] ?? "?"] { #expect(!run.stdout.contains(secret) && !run.stderr.contains(secret)) }
        }
        let apply = try Self.run(["repair", "--apply", "--quarantine", "/tmp/nowhere", "s3://golden/dated"])
        #expect(apply.status == 2 && apply.stderr.hasPrefix("remote.read-only URL: "), "\(apply.stderr)")
    }

    @Test("the shared credentials file and AWS_PROFILE sign as the environment does; the secret is in no output and not in the manifest")
    func credentialsFile() throws {
        _ = try #require(Self.server)
        let scratch = try RemoteFolderTests.scratch()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let file = scratch.appendingPathComponent("credentials")
        try Data(
            "[default]\naws_access_key_id = WRONG\naws_secret_access_key = WRONG\n\n[sync]\naws_access_key_id = \(Self.keyID)\naws_secret_access_key = \(Self.secret)\n"
                .utf8
        )
        .write(to: file)
        let environment = ["AWS_SHARED_CREDENTIALS_FILE": file.path, "AWS_CONFIG_FILE": "/nonexistent", "AWS_PROFILE": "sync"]
        let fetched = try Self.run(["fetch", "s3://golden/dated", scratch.appendingPathComponent("copy").path], environment: environment)
        #expect(fetched.status == 0, "\(fetched.stderr)")
        let manifest = try String(contentsOf: scratch.appendingPathComponent("copy/.logtool-fetch.json"), encoding: .utf8)
        #expect(!manifest.contains(Self.secret) && !manifest.contains(Self.keyID))
        var noProfile = environment
        noProfile["AWS_PROFILE"] = "elsewhere"
        let missing = try Self.run(["inspect", "s3://golden/dated"], environment: noProfile)
        #expect(missing.status == 2 && missing.stderr.hasPrefix("remote.credentials: the profile elsewhere (AWS_PROFILE)"), "\(missing.stderr)")
        for run in [fetched, missing] { #expect(!run.stdout.contains(Self.secret) && !run.stderr.contains(Self.secret)) }
    }

    @Test("keys with spaces and Unicode are fetched; `..`, `.`, empty segments, the manifest's name, file-and-folder and long names never escape")
    func unsafeNames() throws {
        _ = try #require(Self.server)
        let scratch = try RemoteFolderTests.scratch()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let destination = scratch.appendingPathComponent("names")
        let run = try Self.run(["fetch", "s3://names", destination.path])
        #expect(run.status == 1, "\(run.stderr)")
        #expect(try RemoteFolderTests.files(under: destination) == ["conflict", "with space", "ünïcode—日"])
        #expect(try Data(contentsOf: destination.appendingPathComponent("ünïcode—日")) == Data("unicode".utf8))
        let lines = run.stderr.split(separator: "\n")
        // ../escape, ../ + U+0301 + escape, a/../b, x//y, ./dot, /leading, .logtool-fetch.json, conflict/inner, l×256.
        #expect(lines.count == 9, "\(run.stderr)")
        #expect(lines.allSatisfy { $0.hasPrefix("remote.unsafe-name ") }, "\(run.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path) == ["names"])
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: destination.path).sorted() == [".logtool-fetch.json", "conflict", "with space", "ünïcode—日"])
    }
}

/// The S3 pieces that need no server: URLs, addressing, credentials' sources, the listing's XML.
@Suite("Remote folders: S3 URLs, credentials, listing pages")
struct S3UnitTests {
    @Test("s3:// URLs: path-style against an endpoint, virtual-hosted against AWS, path-style for dotted names; what is refused")
    func locations() throws {
        let local = try RemoteLocation("s3://bucket/a b/ü", protocolName: nil, endpointURL: "http://127.0.0.1:9000", region: nil)
        #expect(local.collection.absoluteString == "http://127.0.0.1:9000/bucket/")
        #expect(local.s3 == .init(bucket: "bucket", prefix: "a b/ü/", region: "us-east-1"))
        #expect(local.folderName == "ü")
        #expect(local.url(of: ["E", "x y"], isFolder: false).absoluteString == "http://127.0.0.1:9000/bucket/a%20b/%C3%BC/E/x%20y")
        let aws = try RemoteLocation("s3://my-bucket/sync/", protocolName: nil, region: "eu-west-1")
        #expect(aws.collection.absoluteString == "https://my-bucket.s3.eu-west-1.amazonaws.com/")
        #expect(aws.folderName == "sync")
        #expect(try RemoteLocation("s3://my.bucket", protocolName: nil).collection.absoluteString == "https://s3.us-east-1.amazonaws.com/my.bucket/")
        #expect(try RemoteLocation("s3://b", protocolName: nil, endpointURL: "https://h:443/base").collection.absoluteString == "https://h/base/b/")
        #expect(try RemoteLocation("s3://whole", protocolName: nil, endpointURL: "http://h").folderName == "whole")
        #expect(try RemoteLocation("s3://b/a//c//", protocolName: nil).s3?.prefix == "a//c/")
        #expect(throws: FormatError.self) { try RemoteLocation("s3://b/../x", protocolName: nil) }
        #expect(throws: FormatError.self) { try RemoteLocation("s3://b@c/x", protocolName: nil) }
        #expect(throws: FormatError.self) { try RemoteLocation("s3://b/x", protocolName: nil, region: "EU WEST") }
        #expect(throws: FormatError.self) { try RemoteLocation("s3://b/x", protocolName: nil, endpointURL: "http://u:p@h") }
        #expect(throws: FormatError.self) { try RemoteLocation("webdav://h/x", protocolName: nil, endpointURL: "http://h") }
        #expect(throws: FormatError.self) { try RemoteLocation("https://h/x", protocolName: "s3") }
    }

    @Test("the signing of a request as sent: the path and query the URL carries, the Host with its port")
    func signatureOfURL() throws {
        let location = try RemoteLocation("s3://examplebucket", protocolName: nil, endpointURL: "http://127.0.0.1:9000")
        let url = location.s3URL(key: nil, query: [("prefix", "a b/"), ("list-type", "2")])
        #expect(url.absoluteString == "http://127.0.0.1:9000/examplebucket?list-type=2&prefix=a%20b%2F")
        let signer = SignatureV4(accessKey: "AKIAIOSFODNN7EXAMPLE", secretKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", region: "us-east-1")
        let date = Date(timeIntervalSince1970: 1_369_353_600)
        let headers = HTTPTransport.signature(signer, method: "GET", url: url, date: date)
        let direct = signer.signedHeaders(
            method: "GET", path: "/examplebucket", query: [("list-type", "2"), ("prefix", "a b/")], headers: [("Host", "127.0.0.1:9000")], date: date)
        #expect(headers.map(\.1) == direct.map(\.1))
        // A key's path: sent encoded once, signed as its decoded segments encoded again.
        let object = location.url(of: ["a b", "ü+"], isFolder: false)
        #expect(object.absoluteString == "http://127.0.0.1:9000/examplebucket/a%20b/%C3%BC%2B")
        let objectHeaders = HTTPTransport.signature(signer, method: "GET", url: object, date: date)
        let objectDirect = signer.signedHeaders(method: "GET", path: "/examplebucket/a b/ü+", query: [], headers: [("Host", "127.0.0.1:9000")], date: date)
        #expect(objectHeaders.map(\.1) == objectDirect.map(\.1))
    }

    @Test("credentials: the environment first, then the profile of the shared file, then the config file; half a pair and a missing profile refused")
    func credentialSources() throws {
        let scratch = try RemoteFolderTests.scratch()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let credentials = scratch.appendingPathComponent("credentials"), config = scratch.appendingPathComponent("config")
        try Data(
            "# comment\n[default]\naws_access_key_id=DK\naws_secret_access_key = DS\n[p]\naws_access_key_id = PK\naws_secret_access_key = PS\naws_session_token = PT\n"
                .utf8
        )
        .write(to: credentials)
        try Data(
            "[default]\nregion = eu-west-3\n[profile c]\naws_access_key_id = CK\naws_secret_access_key = CS\nregion = ap-south-1\ns3 =\n  addressing_style = path\n"
                .utf8
        )
        .write(to: config)
        let files = ["AWS_SHARED_CREDENTIALS_FILE": credentials.path, "AWS_CONFIG_FILE": config.path]
        func resolve(_ extra: [String: String]) throws -> [String?] {
            let found = try S3Credentials.resolve(environment: files.merging(extra) { $1 })
            return [found?.accessKeyID, found?.secretAccessKey, found?.sessionToken]
        }
        #expect(try resolve(["AWS_ACCESS_KEY_ID": "EK", "AWS_SECRET_ACCESS_KEY": "ES", "AWS_SESSION_TOKEN": "ET", "AWS_PROFILE": "p"]) == ["EK", "ES", "ET"])
        #expect(try resolve([:]) == ["DK", "DS", nil])
        #expect(try resolve(["AWS_PROFILE": "p"]) == ["PK", "PS", "PT"])
        #expect(try resolve(["AWS_PROFILE": "c"]) == ["CK", "CS", nil])
        #expect(throws: FormatError.self) { try resolve(["AWS_PROFILE": "nowhere"]) }
        #expect(throws: FormatError.self) { try resolve(["AWS_ACCESS_KEY_ID": "EK"]) }
        #expect(try S3Credentials.resolve(environment: ["AWS_SHARED_CREDENTIALS_FILE": "/nonexistent", "AWS_CONFIG_FILE": "/nonexistent"]) == nil)
        #expect(S3Credentials.region(environment: files) == "eu-west-3")
        #expect(S3Credentials.region(environment: files.merging(["AWS_PROFILE": "c"]) { $1 }) == "ap-south-1")
        #expect(S3Credentials.region(environment: files.merging(["AWS_DEFAULT_REGION": "us-west-2"]) { $1 }) == "us-west-2")
        #expect(String(describing: S3Credentials(accessKeyID: "K", secretAccessKey: "SECRET")).contains("SECRET") == false)
    }

    @Test("a ListObjectsV2 page: URL-encoded keys decoded (+ is a space), the token, a document of another kind refused")
    func listPage() throws {
        let page = try ListBucketReader.read(
            Data(
                """
                <?xml version="1.0" encoding="UTF-8"?>
                <ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name><IsTruncated>true</IsTruncated>\
                <Contents><Key>a+b%2Bc/%C3%BC</Key><LastModified>2020-09-13T12:26:40.000Z</LastModified><ETag>&quot;e1&quot;</ETag><Size>5</Size></Contents>\
                <EncodingType>url</EncodingType><NextContinuationToken>T2</NextContinuationToken></ListBucketResult>
                """.utf8), maximumKeys: 10)
        #expect(page.objects == [S3Object(key: "a b+c/ü", size: 5, etag: "\"e1\"", lastModified: "2020-09-13T12:26:40.000Z")])
        #expect(page.isTruncated && page.nextToken == "T2")
        #expect(throws: FormatError.self) { try ListBucketReader.read(Data("<Error><Code>AccessDenied</Code></Error>".utf8), maximumKeys: 10) }
        #expect(throws: FormatError.self) { try ListBucketReader.read(Data("<ListBucketResult><Contents>".utf8), maximumKeys: 10) }
        let three = (0..<3).map { "<Contents><Key>k\($0)</Key><Size>1</Size></Contents>" }.joined()
        #expect(throws: FormatError.self) { try ListBucketReader.read(Data("<ListBucketResult>\(three)</ListBucketResult>".utf8), maximumKeys: 2) }
        #expect(try ListBucketReader.read(Data("<ListBucketResult>\(three)</ListBucketResult>".utf8), maximumKeys: 3).objects.count == 3)
        #expect(S3ErrorReader.code(Data("<?xml version=\"1.0\"?><Error><Code>NoSuchBucket</Code><Message>m</Message></Error>".utf8)) == "NoSuchBucket")
    }

    @Test("what an S3 error answer adds: its Code, the bucket's region, that no credentials were found")
    func errorHints() throws {
        let location = try RemoteLocation("s3://b/p", protocolName: nil, region: "us-east-1")
        let denied = HTTPTransport.Response(
            status: 403, headers: [:], body: Data("<Error><Code>AccessDenied</Code></Error>".utf8), bytes: 0, url: location.collection)
        let unsigned = RemoteSnapshot(location: location, options: .init())
        #expect(
            unsigned.s3Hint(denied)
                == " (AccessDenied; no AWS credentials were found: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, ~/.aws/credentials)")
        let signed = RemoteSnapshot(location: location, options: .init(s3Credentials: S3Credentials(accessKeyID: "K", secretAccessKey: "S")))
        #expect(signed.s3Hint(denied) == " (AccessDenied)")
        let moved = HTTPTransport.Response(
            status: 301, headers: ["x-amz-bucket-region": "eu-west-1"], body: Data("<Error><Code>PermanentRedirect</Code></Error>".utf8), bytes: 0,
            url: location.collection)
        #expect(signed.s3Hint(moved) == " (PermanentRedirect; the bucket is in eu-west-1: --region eu-west-1)")
        #expect(signed.s3Hint(HTTPTransport.Response(status: 404, headers: [:], body: Data(), bytes: 0, url: location.collection)) == " (not found)")
    }
}

/// The S3 answers moto never gives, from `scripts/s3-stub-server.py` (standard library only, so
/// these always run): 10,000 keys listed in pages through opaque continuation tokens, a listing
/// answered 500, cut short or truncated without a token, and downloads dropped mid-body, stalled
/// or answered 500 (Spec/remote.md 6, 11.4). Requests go unsigned (no AWS credentials, 11.6).
@Suite("Remote folders (S3 stub)", .serialized)
struct S3StubTests {
    static let stub: LoopbackServer? = try? LoopbackServer([], script: "s3-stub-server.py")
    static var endpoint: String { "http://127.0.0.1:\(stub?.port ?? 1)" }
    static let environment = ["AWS_SHARED_CREDENTIALS_FILE": "/nonexistent", "AWS_CONFIG_FILE": "/nonexistent"]

    static func run(_ arguments: [String]) throws -> RemoteFolderTests.Output {
        try RemoteFolderTests.run(arguments + ["--endpoint-url", endpoint], environment: environment, clearing: ["AWS_"])
    }

    /// The stub's count of ListObjectsV2 requests to the bucket `many`, and its largest page.
    static func stats() throws -> [Int] {
        let text = String(decoding: try Data(contentsOf: URL(string: "\(endpoint)/_stats")!), as: UTF8.self)
        return text.split(separator: " ").compactMap { Int($0) }
    }

    /// Listed in the test process: fetching the 10,000 files from the stub takes about 40 s
    /// (debug), too long for the suite; the downloads are the other tests' (and the WebDAV
    /// suite's in-flight test).
    @Test("10,000 keys: listed in 10 pages of 1,000 through the continuation tokens, every key with its size, ETag and date")
    func tenThousandKeys() throws {
        _ = try #require(Self.stub)
        let location = try RemoteLocation("s3://many", protocolName: nil, endpointURL: Self.endpoint, region: "us-east-1")
        let snapshot = RemoteSnapshot(location: location, options: .init(timeout: 10))
        let transport = HTTPTransport(idleTimeout: 10, totalTimeout: 200, credentials: nil, displayName: location.display)
        let before = try Self.stats()
        var report = RemoteSnapshot.Report()
        let (entries, problems) = try snapshot.list(transport, report: &report)
        #expect(problems.isEmpty, "\(problems)")
        #expect(report.listingRequests == 10)
        let after = try Self.stats()
        // The stub counted 10 requests, and never answered more than 1,000 keys in one.
        #expect(after.first.map { $0 - (before.first ?? 0) } == 10, "\(before) \(after)")
        #expect(after.last == 1000)
        #expect(entries.map(\.relative) == (0..<10_000).map { String(format: "E/events/f%05d", $0) })
        // Sizes and dates as the stub lists them: 6 bytes, 1,600,000,000 + the key's number.
        let wrong = entries.enumerated().filter { index, entry in
            entry.size != 6 || entry.etag?.count != 34 || entry.modified != Date(timeIntervalSince1970: 1_600_000_000 + Double(index))
        }
        #expect(wrong.isEmpty, "\(wrong.prefix(3).map(\.element.relative))")
    }

    @Test(
        "a listing answered 500, cut short, or truncated without a continuation token: exit 2 and its code, nothing read",
        arguments: [
            ("s3://fail/list500", "remote.http-status .: ListObjectsV2 answered 500 (InternalError)"),
            ("s3://fail/malformed", "remote.malformed-listing .: the ListObjectsV2 answer is not a ListBucketResult"),
            ("s3://fail/notoken", "remote.malformed-listing .: a truncated ListObjectsV2 page without a new continuation token"),
            // Tokens A, B, A, ...: not the token just sent, but one sent before.
            ("s3://fail/cycle", "remote.malformed-listing .: a truncated ListObjectsV2 page without a new continuation token"),
        ])
    func listingFailures(url: String, message: String) throws {
        _ = try #require(Self.stub)
        let scratch = try RemoteFolderTests.scratch()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let run = try Self.run(["fetch", url, scratch.appendingPathComponent("copy").path])
        #expect(run.status == 2, "\(run.stderr)")
        #expect(run.stderr.hasPrefix(message), "\(run.stderr)")
        let inspect = try Self.run(["inspect", url])
        #expect(inspect.status == 2 && inspect.stderr.hasPrefix(message) && inspect.stdout.isEmpty, "\(inspect.stderr)")
    }

    @Test("a key a later page lists again is named and fetched once")
    func repeatedKey() throws {
        _ = try #require(Self.stub)
        let scratch = try RemoteFolderTests.scratch()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let snapshot = scratch.appendingPathComponent("repeat")
        let run = try Self.run(["fetch", "s3://fail/repeat", snapshot.path])
        #expect(run.status == 1, "\(run.stderr)")
        #expect(run.stdout == "2 files listed: 2 fetched (2 bytes), 0 already current, 0 removed; 1 problems\n", "\(run.stdout)")
        #expect(run.stderr == "remote.unsafe-name a: a second key of this name: not fetched\n", "\(run.stderr)")
        let manifest = try JSONParser.parse(Array(Data(contentsOf: snapshot.appendingPathComponent(".logtool-fetch.json"))))
        #expect(manifest[JSONPointer(["files"])]?.arrayValue?.compactMap { $0[JSONPointer(["path"])]?.stringValue } == ["a", "b"])
    }

    @Test("downloads answered 500, dropped mid-body and stalled: each named with its code, exit 1, the other file fetched, no partial file left")
    func downloadFailures() throws {
        _ = try #require(Self.stub)
        let scratch = try RemoteFolderTests.scratch()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let snapshot = scratch.appendingPathComponent("files")
        let started = Date()
        let run = try Self.run(["fetch", "--remote-timeout", "1", "s3://fail/files", snapshot.path])
        #expect(Date().timeIntervalSince(started) < 5)
        #expect(run.status == 1, "\(run.stderr)")
        #expect(run.stdout == "4 files listed: 1 fetched (2 bytes), 0 already current, 0 removed; 3 problems\n", "\(run.stdout)")
        let lines = run.stderr.split(separator: "\n").map(String.init)
        #expect(lines.count == 3, "\(run.stderr)")
        for prefix in ["remote.http-status 500: GET answered 500 (InternalError)", "remote.connection drop: ", "remote.timeout stall: "] {
            #expect(lines.contains { $0.hasPrefix(prefix) }, "\(prefix): \(run.stderr)")
        }
        #expect(try RemoteFolderTests.files(under: snapshot, hidden: true) == [".logtool-fetch.json", "ok"])
    }
}
