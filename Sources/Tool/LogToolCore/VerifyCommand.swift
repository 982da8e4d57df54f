import ArgumentParser
import Foundation
import EnsemblesToolkit

/// `logtool verify`: the doctor for a cloud folder (Spec/verify.md).
struct Verify: ParsableCommand, HasOutputOptions {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check a cloud folder and say what is wrong, where, and what it means.",
        discussion: """
            Reads every file, checks the folder as a merge would see it, and reports diagnostics \
            (Spec/diagnostics.md) grouped by severity, with how much a rebase would save. Never \
            writes anything. Exit status: 0 no error (with --strict: no error and no warning), 1 \
            otherwise, 2 usage or I/O error.

            --severity and --accept change how findings count, never what is found \
            (Spec/verify.md 5.1): a code that makes a merge fail cannot be lowered or accepted.

            Examples:
              logtool verify cloud/MainStore
              logtool verify --strict --json cloud > verify.json
              logtool verify --severity verify.debris=info cloud
              logtool verify --write-accept known.json cloud && logtool verify --accept known.json cloud
              logtool verify --device eventdata/MainStore cloud
            """
    )

    @OptionGroup(title: "Output Options") var outputOptions: OutputOptions

    @OptionGroup var options: ReadingOptions

    @OptionGroup var modelVersions: ModelVersionOptions

    @Flag(name: .long, help: "Count warnings as errors for the exit status.")
    var strict = false

    @Flag(name: .long, help: "Print the report as JSON (Spec/verify.md).")
    var json = false

    @Option(
        name: .customLong("as-store"),
        help: ArgumentHelp("Also report what device STORE holds back and why (Spec/merge.md 15).", valueName: "STORE"))
    var asStore: String?

    @Option(
        name: .long,
        help: ArgumentHelp("Also check a device's event-data folder against the cloud folder (Spec/diagnostics.md 4.17d).", valueName: "DEVICE-DIR"),
        completion: .directory)
    var device: String?

    @OptionGroup var identity: BackendIdentityOption

    @Option(
        name: .customLong("severity"),
        help: ArgumentHelp("Report CODE's diagnostics as LEVEL: error, warning, info or ignore (repeatable).", valueName: "CODE=LEVEL"))
    var severities: [String] = []

    @Option(
        name: .customLong("accept"),
        help: ArgumentHelp("Accept the diagnostics FILE lists while their files are unchanged (Spec/verify.md 5.1).", valueName: "FILE"),
        completion: .file())
    var acceptList: String?

    @Option(
        name: .customLong("write-accept"), help: ArgumentHelp("Also write an accept list of the diagnostics reported to FILE.", valueName: "FILE"),
        completion: .file())
    var writeAccept: String?

    @Flag(name: .long, help: "With --write-accept: replace FILE if it exists.")
    var force = false

    @OptionGroup var ticdsDates: TICDSDatesOption

    @OptionGroup(title: "Remote Folder Options") var remote: RemoteOptions

    @Argument(help: "A cloud folder: an ensemble folder or a folder of ensembles, or its URL (Spec/remote.md).", completion: .directory)
    var path: String

    func validate() throws {
        try options.validateModelVersion()
        if force && writeAccept == nil { throw ValidationError("--force applies only to --write-accept") }
        guard identity.backendIdentity == nil || device != nil else { throw ValidationError("--backend-identity needs --device") }
    }

    func run() throws {
        let chosen: [FormatError.Code: Diagnostic.Severity?]
        do {
            chosen = try FindingPolicy.severities(severities)
        } catch {
            writeErrors([error], json: json)
            throw ToolExit(status: .usage)
        }
        if let writeAccept { try checkDestination(writeAccept, force: force, existsCode: .verifyAcceptListExists, json: json) }
        // A URL is read from a private snapshot (Spec/remote.md 5.1).
        let (paths, temporary) = try RemoteInputs.localize([self.path], remote, json: json)
        defer { RemoteInputs.remove(temporary) }
        let path = paths[0]
        let ensemble = Ensemble(inputs: [path], options: try options.ensembleOptions(modelVersions, json: json))
        if device == nil && asStore == nil && Ensemble.looksLikeTICDSFolder(path) {
            try verifyTICDS(ensemble)
            return
        }
        if ticdsDates.dates != nil {
            writeErrors([FormatError(.ticdsNotTICDSFolder, "--dates applies to a TICoreDataSync folder", location: .init(file: path))], json: json)
            throw ToolExit(status: .usage)
        }
        let progress = isatty(STDERR_FILENO) == 1
        var results: [EnsembleVerification]
        do {
            results = try ensemble.verify(asStore: asStore, severities: chosen, acceptList: acceptList, recordingDigests: writeAccept != nil) {
                identifier, entries in
                if progress { Console.err(Data("\rverifying \(escaped(identifier)): \(entries) entries…".utf8)) }
            }
        } catch {
            throw reportAndExit(error, json: json)
        }
        if progress { Console.err(Data("\r\u{1B}[K".utf8)) }
        if let device {
            // The device's findings join its ensemble's (the first one when no name matches).
            let found: [Diagnostic]
            do {
                found = try Ensemble.verifyDevice(at: device, cloud: path, backendIdentity: identity.backendIdentity)
            } catch {
                throw reportAndExit(error, json: json)
            }
            let ensembleName = URL(fileURLWithPath: device).lastPathComponent
            let index = results.firstIndex { $0.identifier == ensembleName } ?? results.indices.first
            if let index { results[index].add(found) }
        }
        let all = results.flatMap(\.diagnostics)
        let counts = Diagnostic.Severity.allCases.map { severity in all.filter { $0.severity == severity && !$0.accepted }.count }
        // The summary's policy members appear only when a policy was given (Spec/verify.md 4.5).
        let policyCounts: [(String, Int)]? =
            severities.isEmpty && acceptList == nil ? nil : [("accepted", all.filter(\.accepted).count), ("ignored", results.map(\.ignored).reduce(0, +))]
        if json {
            writeJSON(
                .object(
                    JSONObject([
                        ("verifyVersion", JSONValue(Int64(1))),
                        ("kind", .string("verify")),
                        (
                            "ensembles",
                            .array(
                                results.map { result in
                                    .object(
                                        JSONObject([
                                            ("identifier", .string(result.identifier)),
                                            ("path", .string(result.displayPath)),
                                            ("diagnostics", .array(result.diagnostics.map(Self.json))),
                                            ("growth", result.growth),
                                        ]))
                                })
                        ),
                        (
                            "summary",
                            .object(
                                JSONObject(
                                    [
                                        ("errors", JSONValue(Int64(counts[0]))), ("warnings", JSONValue(Int64(counts[1]))),
                                        ("infos", JSONValue(Int64(counts[2]))),
                                    ] + (policyCounts ?? []).map { ($0.0, JSONValue(Int64($0.1))) }))
                        ),
                    ])))
        } else {
            let policyText = (policyCounts ?? []).map { ", \($0.1) \($0.0)" }.joined()
            writeStandardOutput(Self.text(results) + "\(counts[0]) errors, \(counts[1]) warnings, \(counts[2]) infos\(policyText)\n")
        }
        if let writeAccept {
            try writeOutputFile(
                Data(Ensemble.acceptList(for: results)), to: writeAccept, replacing: force, what: "the accept list", existsCode: .verifyAcceptListExists,
                json: json)
        }
        if counts[0] > 0 || (strict && counts[1] > 0) { throw ToolExit(status: .problemsFound) }
    }

    /// A TICoreDataSync folder (Spec/ticds.md 8): its findings in the verify document's `ticds`
    /// member, `ensembles` empty.
    func verifyTICDS(_ ensemble: Ensemble) throws {
        let found: [Diagnostic]
        do {
            found = try ensemble.verifyTICDS(datesFile: ticdsDates.dates)
        } catch {
            throw reportAndExit(error, json: json)
        }
        let counts = Diagnostic.Severity.allCases.map { severity in found.filter { $0.severity == severity }.count }
        if json {
            writeJSON(
                .object(
                    JSONObject([
                        ("verifyVersion", JSONValue(Int64(1))), ("kind", .string("verify")), ("ensembles", .array([])),
                        ("ticds", .object(JSONObject([("path", .string(path)), ("diagnostics", .array(found.map(Self.json)))]))),
                        (
                            "summary",
                            .object(
                                JSONObject([
                                    ("errors", JSONValue(Int64(counts[0]))), ("warnings", JSONValue(Int64(counts[1]))), ("infos", JSONValue(Int64(counts[2]))),
                                ]))
                        ),
                    ])))
        } else {
            var lines = ["TICoreDataSync folder \(escaped(path))"]
            for severity in Diagnostic.Severity.allCases {
                let group = found.filter { $0.severity == severity }
                guard !group.isEmpty else { continue }
                lines.append("  \(severity.rawValue.capitalized)s (\(group.count))")
                for diagnostic in group {
                    lines.append("    \(diagnostic.code) \(diagnostic.files.map(escaped).joined(separator: ", "))")
                    lines.append("      \(escaped(diagnostic.reason))")
                    lines.append("      -> \(escaped(diagnostic.consequence))")
                }
            }
            writeStandardOutput(lines.joined(separator: "\n") + "\n\(counts[0]) errors, \(counts[1]) warnings, \(counts[2]) infos\n")
        }
        if counts[0] > 0 || (strict && counts[1] > 0) { throw ToolExit(status: .problemsFound) }
    }

    static func json(_ diagnostic: Diagnostic) -> JSONValue {
        .object(
            JSONObject(
                [
                    ("code", .string(diagnostic.code.rawValue)),
                    ("severity", .string(diagnostic.severity.rawValue)),
                    ("number", diagnostic.number.map { JSONValue(Int64($0)) } ?? .null),
                    ("files", .array(diagnostic.files.map(JSONValue.string))),
                    ("reason", .string(diagnostic.reason)),
                    ("consequence", .string(diagnostic.consequence)),
                    ("details", .object(diagnostic.details)),
                ] + (diagnostic.severityChosen ? [("severityChosen", .bool(true))] : []) + (diagnostic.accepted ? [("accepted", .bool(true))] : [])))
    }

    static func text(_ results: [EnsembleVerification]) -> String {
        var lines: [String] = []
        for result in results {
            // "." is the folder given itself: only a subfolder's path says something.
            lines.append("Ensemble \(escaped(result.identifier))" + (result.displayPath == "." ? "" : " (\(escaped(result.displayPath)))"))
            let groups =
                Diagnostic.Severity.allCases.map { severity in
                    ("\(severity.rawValue.capitalized)s", result.diagnostics.filter { $0.severity == severity && !$0.accepted })
                } + [("Accepted", result.diagnostics.filter(\.accepted))]
            for (heading, group) in groups where !group.isEmpty {
                lines.append("  \(heading) (\(group.count))")
                for diagnostic in group {
                    let number = diagnostic.number.map { " (\($0))" } ?? ""
                    let chosen =
                        diagnostic.severityChosen || diagnostic.accepted
                        ? " [\(diagnostic.severity.rawValue)\(diagnostic.severityChosen ? ", chosen" : "")]" : ""
                    lines.append("    \(diagnostic.code)\(number)\(chosen) \(diagnostic.files.map(escaped).joined(separator: ", "))")
                    lines.append("      \(escaped(diagnostic.reason))")
                    lines.append("      -> \(escaped(diagnostic.consequence))")
                }
            }
            let growth = result.growth
            func value(_ path: [String]) -> String { InspectText.text(growth[JSONPointer(path)]) }
            lines.append(
                "  Growth: events \(value(["bytes", "events"])) bytes in \(value(["files", "events"])) files, baselines \(value(["bytes", "baselines"])), data \(value(["bytes", "data"])), debris \(value(["bytes", "debris"])) bytes"
            )
            let covered = growth[JSONPointer(["coveredEvents"])]
            let compaction = growth[JSONPointer(["compaction"])]?.numberValue.flatMap { Double($0.text) } ?? 0
            let recommendation = result.rebaseReason.map { "rebase recommended: \($0)" } ?? "rebase not recommended"
            lines.append(
                "    \(value(["coveredEvents"])) covered \(covered == JSONValue(Int64(1)) ? "event" : "events"); rebase compaction \(String(format: "%.2f", compaction)); \(recommendation)"
            )
            lines.append("")
        }
        return lines.joined(separator: "\n") + (lines.isEmpty ? "" : "\n")
    }
}
