import ArgumentParser
import Foundation
import JSONDocument
import EventCodecs
import SchemaValidation
import CloudFolder

/// Exit statuses every `logtool` command uses (Spec/inspect.md).
public enum ExitStatus: Int32, Sendable {
    /// Everything was read (and, for checks, found valid).
    case success = 0
    /// Some file could not be read or was invalid; the rest of the output still stands.
    case problemsFound = 1
    /// The command line was wrong, or the path is missing or is not a cloud folder or event file.
    case usage = 2
}

/// The `logtool` command: look inside Ensembles cloud folders and event files.
public struct LogTool: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "logtool",
        abstract: "Inspect and validate Ensembles cloud folders and event files.",
        subcommands: [Inspect.self, Validate.self]
    )

    public init() {}

    /// Runs the command line and returns the exit status; usage errors exit with 2, not the
    /// argument parser's 64, as the Spec promises.
    public static func run(arguments: [String]) -> Int32 {
        do {
            var command = try parseAsRoot(arguments)
            try command.run()
            return ExitStatus.success.rawValue
        } catch let status as ToolExit {
            return status.status.rawValue
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                print(fullMessage(for: error))
                return ExitStatus.success.rawValue
            }
            FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
            return ExitStatus.usage.rawValue
        }
    }
}

/// Ends a command with a status after its output has been written.
struct ToolExit: Error {
    var status: ExitStatus
}

func writeStandardError(_ text: String) {
    FileHandle.standardError.write(Data((text.hasSuffix("\n") ? text : text + "\n").utf8))
}

func writeStandardOutput(_ text: String) {
    FileHandle.standardOutput.write(Data(text.utf8))
}

/// Prints a JSON document for scripts: canonical (compact, sorted keys), then one LF.
func writeJSON(_ value: JSONValue) {
    writeStandardOutput(JSONWriter().string(value) + "\n")
}

struct Inspect: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show what a cloud folder or an event file holds.",
        discussion: """
        PATH is an ensemble folder, a folder holding ensembles, or one .cdeevent file. The folder \
        is only read: nothing is written and symbolic links are not followed.
        Exit status: 0 everything was read, 1 some file could not be read (the rest is still \
        shown), 2 usage error or PATH is neither a cloud folder nor a file.
        """
    )

    @Argument(help: "A cloud folder, an ensemble folder or an event file.")
    var path: String

    @Flag(name: .long, help: "Print the report as JSON (Spec/inspect.md).")
    var json = false

    func run() throws {
        let report: JSONValue
        do {
            report = try InspectReport.make(path: path)
        } catch {
            writeStandardError("logtool: \(error)")
            throw ToolExit(status: .usage)
        }
        if json {
            writeJSON(report)
        } else {
            writeStandardOutput(InspectText.render(report))
        }
        let unreadable = report[JSONPointer(["summary", "unreadable"])]?.numberValue?.int64Value
            ?? Int64(report[JSONPointer(["unreadable"])]?.arrayValue?.count ?? 0)
        if unreadable > 0 { throw ToolExit(status: .problemsFound) }
    }
}

struct Validate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check JSON files against one of the Spec's schemas.",
        discussion: """
        Reports every schema violation with its JSON pointer. Only the schema is checked; \
        `inspect` also decodes. Exit status: 0 all valid, 1 some file invalid or unparseable, 2 usage error.
        """
    )

    @Option(name: .long, help: "The schema: \(BundledSchema.allCases.map(\.rawValue).joined(separator: ", ")).")
    var schema: String = BundledSchema.v2Event.rawValue

    @Flag(name: .long, help: "Print the verdicts as JSON.")
    var json = false

    @Argument(help: "The JSON files to check.")
    var files: [String]

    func validate() throws {
        guard BundledSchema(rawValue: schema) != nil else {
            throw ValidationError("unknown schema \"\(schema)\"; expected one of \(BundledSchema.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard !files.isEmpty else { throw ValidationError("give at least one file") }
    }

    func run() throws {
        guard let bundled = BundledSchema(rawValue: schema) else { throw ToolExit(status: .usage) }
        let validator: SchemaValidator
        do {
            validator = try bundled.validator()
        } catch {
            writeStandardError("logtool: \(error)")
            throw ToolExit(status: .usage)
        }
        var verdicts: [JSONValue] = []
        var allValid = true
        for file in files {
            var verdict = "valid"
            var errors: [FormatError] = []
            do {
                let bytes = try Data(contentsOf: URL(fileURLWithPath: file))
                let document = try JSONParser.parse(bytes)
                errors = validator.validate(document)
                if !errors.isEmpty { verdict = "invalid" }
            } catch let error as FormatError {
                errors = [error]
                verdict = "unparseable"
            } catch {
                errors = [FormatError(.fileUnreadable, "the file could not be read: \(error.localizedDescription)")]
                verdict = "unparseable"
            }
            errors = errors.map { $0.inFile(file) }
            if verdict != "valid" { allValid = false }
            verdicts.append(.object(JSONObject([
                ("file", .string(file)),
                ("verdict", .string(verdict)),
                ("errors", .array(errors.map { error in
                    .object(JSONObject([
                        ("code", .string(error.code.rawValue)),
                        ("pointer", error.location.pointer.map { .string($0.description) } ?? .null),
                        ("offset", error.location.offset.map { JSONValue(Int64($0)) } ?? .null),
                        ("message", .string(error.message)),
                    ]))
                })),
            ])))
            if !json {
                writeStandardOutput(errors.isEmpty ? "\(file): valid\n" : errors.map { "\($0)\n" }.joined())
            }
        }
        if json { writeJSON(.object(JSONObject([("files", .array(verdicts))]))) }
        if !allValid { throw ToolExit(status: .problemsFound) }
    }
}
