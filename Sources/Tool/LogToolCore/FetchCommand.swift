import ArgumentParser
import Foundation
import EnsemblesToolkit
import ProgressReporting
import RemoteFolder
import TemporaryFiles

/// How a command reaches a remote folder (Spec/remote.md 2, 7): the protocol of an `http(s)`
/// URL, the credentials' sources and the timeout. Credentials come from a file or the
/// environment, never from an argument (other users can read a process's arguments).
struct RemoteOptions: ParsableArguments {
    @Option(
        name: .customLong("protocol"), help: ArgumentHelp("For an http(s):// URL: the protocol to read it with (webdav, ensembles-server).", valueName: "NAME"))
    var protocolName: String?

    @Option(
        name: .customLong("endpoint-url"),
        help: ArgumentHelp("For an s3:// URL: an S3-compatible server's URL, asked path-style (default: AWS).", valueName: "URL"))
    var endpointURL: String?

    @Option(
        name: .customLong("region"),
        help: ArgumentHelp(
            "For an s3:// URL: the region to sign for (default: $AWS_REGION, $AWS_DEFAULT_REGION, the profile's, us-east-1).", valueName: "REGION"))
    var region: String?

    @Option(name: .customLong("remote-user"), help: ArgumentHelp("The user name for a remote folder (default: $LOGTOOL_REMOTE_USER).", valueName: "NAME"))
    var user: String?

    @Option(
        name: .customLong("remote-password-file"),
        help: ArgumentHelp("Read the remote folder's password from FILE (default: $LOGTOOL_REMOTE_PASSWORD).", valueName: "FILE"), completion: .file())
    var passwordFile: String?

    @Option(
        name: .customLong("remote-timeout"),
        help: ArgumentHelp("Seconds a request to a remote folder may receive nothing (its whole time: 20 times that).", valueName: "SECONDS"))
    var timeout: Double = 30

    static let userVariable = "LOGTOOL_REMOTE_USER"
    static let passwordVariable = "LOGTOOL_REMOTE_PASSWORD"

    /// The credentials, or nil when none are given; a password without a user, or a password
    /// file that cannot be read, is a usage error.
    func credentials(json: Bool) throws -> RemoteCredentials? {
        let environment = ProcessInfo.processInfo.environment
        let user = self.user ?? environment[Self.userVariable].flatMap { $0.isEmpty ? nil : $0 }
        var password: String?
        if let passwordFile {
            guard let handle = FileHandle(forReadingAtPath: passwordFile),
                let data = try? handle.read(upToCount: PasswordOption.maximumFileBytes + 1) ?? Data(), data.count <= PasswordOption.maximumFileBytes,
                let bytes = PasswordOption.password(fromFile: [UInt8](data)), let text = String(validating: bytes, as: UTF8.self)
            else {
                writeErrors(
                    [
                        FormatError(
                            .remoteCredentials, "the password file could not be read, is empty, not UTF-8 or too large", location: .init(file: passwordFile))
                    ],
                    json: json)
                throw ToolExit(status: .usage)
            }
            password = text
        } else if let value = environment[Self.passwordVariable], !value.isEmpty {
            password = value
        }
        guard let password else { return nil }
        guard let user else {
            writeErrors([FormatError(.remoteCredentials, "a password was given without a user name (--remote-user or \(Self.userVariable))")], json: json)
            throw ToolExit(status: .usage)
        }
        return RemoteCredentials(user: user, password: password)
    }

    func location(_ argument: String, json: Bool) throws -> RemoteLocation {
        // The region as the AWS tools choose it (Spec/remote.md 11.2), for s3:// only: a
        // WebDAV URL given --region is refused, one with AWS_REGION set is not.
        let isS3 = argument.lowercased().hasPrefix("s3://")
        let region = self.region ?? (isS3 ? S3Credentials.region(environment: ProcessInfo.processInfo.environment) : nil)
        do { return try RemoteLocation(argument, protocolName: protocolName, endpointURL: endpointURL, region: region) } catch {
            writeErrors([error], json: json)
            throw ToolExit(status: .usage)
        }
    }

    func snapshotOptions(for location: RemoteLocation, json: Bool) throws -> RemoteSnapshot.Options {
        guard timeout > 0, timeout <= 3600 else {
            writeErrors([FormatError(.remoteBadURL, "--remote-timeout must be more than 0 and at most 3600 seconds")], json: json)
            throw ToolExit(status: .usage)
        }
        guard location.service == .s3 else { return RemoteSnapshot.Options(timeout: timeout, credentials: try credentials(json: json)) }
        // S3 reads AWS's credentials, as the AWS tools do (Spec/remote.md 11.6).
        do { return RemoteSnapshot.Options(timeout: timeout, s3Credentials: try S3Credentials.resolve(environment: ProcessInfo.processInfo.environment)) } catch
        {
            writeErrors([error], json: json)
            throw ToolExit(status: .usage)
        }
    }
}

/// Commands that read a folder and were given a URL read a private snapshot of it, removed
/// afterwards (Spec/remote.md 5.1): their output is the local folder's, byte for byte.
enum RemoteInputs {
    /// `inputs` with every URL replaced by the path of a fresh snapshot of it, and the
    /// snapshots' private folders, to pass to ``remove(_:)``. Any problem of the fetch stops the
    /// command (exit 2): a snapshot that lacks a file would not be the folder.
    static func localize(_ inputs: [String], _ options: RemoteOptions, json: Bool) throws -> (paths: [String], temporary: [URL]) {
        var paths: [String] = []
        var temporary: [URL] = []
        do {
            for input in inputs {
                guard RemoteLocation.isRemote(input) else {
                    paths.append(input)
                    continue
                }
                let location = try options.location(input, json: json)
                let snapshot = RemoteSnapshot(location: location, options: try options.snapshotOptions(for: location, json: json))
                let folder = FileManager.default.temporaryDirectory.appendingPathComponent("logtool-remote-\(UUID().uuidString)", isDirectory: true)
                TemporaryFiles.register(folder.path)
                temporary.append(folder)
                guard mkdir(folder.path, 0o700) == 0 else {
                    writeErrors(
                        [FormatError(.init("file.write-failed"), "a private folder could not be created (errno \(errno))", location: .init(file: folder.path))],
                        json: json)
                    throw ToolExit(status: .usage)
                }
                // The snapshot keeps the folder's own name: an ensemble folder is named by it.
                let name = location.folderName
                let destination = folder.appendingPathComponent(name.isEmpty ? "root" : name, isDirectory: true)
                let report: RemoteSnapshot.Report
                do {
                    report = try snapshot.fetch(into: destination) { done, total, _ in ProgressReport.report("fetching", done: done, total: total) }
                } catch {
                    writeErrors([error], json: json)
                    throw ToolExit(status: .usage)
                }
                guard report.problems.isEmpty else {
                    writeErrors(report.problems, json: json)
                    writeStandardError(
                        "logtool: the remote folder could not be copied whole; nothing was read (fetch it with `logtool fetch` to keep what could be)")
                    throw ToolExit(status: .usage)
                }
                paths.append(destination.path)
                var shown = location.display
                while shown.hasSuffix("/") { shown.removeLast() }
                Console.addRename(snapshot: destination.path, url: shown)
            }
        } catch {
            remove(temporary)
            throw error
        }
        return (paths, temporary)
    }

    static func remove(_ temporary: [URL]) {
        for folder in temporary {
            Console.removeRenames(inside: folder.path)
            try? FileManager.default.removeItem(at: folder)
            TemporaryFiles.unregister(folder.path)
        }
    }
}

/// `logtool fetch URL DIR`: a snapshot of a remote folder (Spec/remote.md 4).
struct Fetch: ParsableCommand, HasOutputOptions {
    static let configuration = CommandConfiguration(
        commandName: "fetch",
        abstract: "Copy a remote folder (WebDAV, S3, Ensembles Server) into a local folder, keeping every file's date.",
        discussion: """
            URL is webdav://HOST/PATH, webdavs://HOST/PATH, an http(s) URL with --protocol \
            webdav or --protocol ensembles-server (then PATH is the folder in the user's cloud \
            tree, and the server's endpoints lie at https://HOST/), or s3://BUCKET/PREFIX (with \
            --endpoint-url for an S3-compatible server, and --region). DIR is created (its parent \
            must exist), or is empty, or is a snapshot of the \
            same URL, which is brought up to date: only missing and changed files (by size and ETag \
            or date) are downloaded, and files the server no longer has are removed from it. \
            DIR/.logtool-fetch.json records what was fetched and when. Nothing on the server is \
            written, moved or deleted. Credentials: --remote-user or LOGTOOL_REMOTE_USER, and \
            --remote-password-file or LOGTOOL_REMOTE_PASSWORD; for S3 as the AWS tools read \
            them: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_PROFILE, \
            ~/.aws/credentials.
            Exit status: 0 everything was fetched, 1 some files were not (each is named), 2 usage \
            error, DIR refused, or the folder could not be listed.

            Examples:
              logtool fetch webdavs://dav.example.com/sync/MainStore MainStore
              LOGTOOL_REMOTE_USER=me logtool fetch --remote-password-file pw \\
                https://dav.example.com/sync --protocol webdav cloud
              AWS_PROFILE=sync logtool fetch s3://my-bucket/sync/MainStore MainStore
              LOGTOOL_REMOTE_USER=me@example.com logtool fetch --remote-password-file pw \\
                --protocol ensembles-server https://sync.example.com/MainStore MainStore
            """
    )

    @OptionGroup(title: "Output Options") var outputOptions: OutputOptions

    @OptionGroup(title: "Remote Folder Options") var remote: RemoteOptions

    @Argument(help: "The remote folder's URL.")
    var url: String

    @Argument(help: "The local folder to fetch into.", completion: .directory)
    var directory: String

    func run() throws {
        let location = try remote.location(url, json: false)
        let snapshot = RemoteSnapshot(location: location, options: try remote.snapshotOptions(for: location, json: false))
        let report: RemoteSnapshot.Report
        do {
            report = try snapshot.fetch(into: URL(fileURLWithPath: directory, isDirectory: true)) { done, total, _ in
                ProgressReport.report("fetching", done: done, total: total)
            }
        } catch {
            writeErrors([error])
            throw ToolExit(status: .usage)
        }
        writeErrors(report.problems)
        writeStandardOutput(
            "\(report.listed) files listed: \(report.fetched) fetched (\(report.bytes) bytes), \(report.kept) already current, \(report.removed) removed; \(report.problems.count) problems\n"
        )
        if !report.problems.isEmpty { throw ToolExit(status: .problemsFound) }
    }
}
