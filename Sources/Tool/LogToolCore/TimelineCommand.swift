import ArgumentParser
import Foundation
import EnsemblesToolkit
import TemporaryFiles

/// `logtool timeline`: a folder's history as one self-contained web page (Spec/timeline.md).
struct Timeline: ParsableCommand, HasOutputOptions {
    static let configuration = CommandConfiguration(
        commandName: "timeline",
        abstract: "Draw a cloud folder's history as one self-contained HTML page (Spec/timeline.md).",
        discussion: """
            One lane per store, a mark per event and baseline, and every finding of verify placed \
            where it happens (with --as-store, device mode's held-back events too). The page needs \
            no network; it reads without JavaScript. Exit status: 0 written, 1 the page could not be \
            written, 2 usage error.

            Examples:
              logtool timeline cloud/MainStore -o timeline.html
              logtool timeline --as-store 1A2B3C4D-STORE cloud/MainStore -o device.html
              logtool timeline --json cloud/MainStore
            """
    )

    @OptionGroup(title: "Output Options") var outputOptions: OutputOptions

    @OptionGroup var options: ReadingOptions
    @OptionGroup var modelVersions: ModelVersionOptions

    @Option(name: .shortAndLong, help: ArgumentHelp("The page to write (default: standard output).", valueName: "FILE"), completion: .file())
    var output: String?

    @Option(name: .customLong("as-store"), help: ArgumentHelp("Also show what device STORE holds back (Spec/merge.md 15).", valueName: "STORE"))
    var asStore: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Also draw what an Ensembles 1.x device's event-data folder holds that the cloud lacks, with its findings (Spec/timeline.md 2).",
            valueName: "DEVICE-DIR"))
    var device: String?

    @OptionGroup var identity: BackendIdentityOption

    @Flag(name: .long, help: "Replace FILE if it exists.")
    var force = false

    @Flag(name: .long, help: "Write what the page draws as one JSON document instead of the page (Spec/timeline.md 6).")
    var json = false

    @OptionGroup(title: "Remote Folder Options") var remote: RemoteOptions

    @Argument(help: "A cloud folder: an ensemble folder or a root, or its URL (Spec/remote.md).", completion: .directory)
    var path: String

    func validate() throws {
        try options.validateModelVersion()
        guard identity.backendIdentity == nil || device != nil else { throw ValidationError("--backend-identity needs --device") }
    }

    func run() throws {
        if let output { try checkDestination(output, force: force, existsCode: .timelineDestinationExists, json: json) }
        // A URL is read from a private snapshot (Spec/remote.md 5.1); the page names the URL.
        let (paths, temporary) = try RemoteInputs.localize([path], remote, json: json)
        defer { RemoteInputs.remove(temporary) }
        let ensemble = Ensemble(inputs: paths, options: try options.ensembleOptions(modelVersions, json: json))
        let reports: [TimelineReport]
        do {
            reports = try ensemble.timeline(asStore: asStore, device: device, backendIdentity: identity.backendIdentity)
        } catch {
            throw reportAndExit(error)
        }
        let page =
            json
            ? Data((JSONWriter().string(Self.document(reports)) + "\n").utf8) : Data(TimelinePage.html(reports, source: path, asStore: asStore).utf8)
        guard let output else { return Console.out(page) }
        try writeOutputFile(page, to: output, replacing: force, what: "the page", existsCode: .timelineDestinationExists, json: json)
    }

    /// What the page draws, for scripts (Spec/timeline.md 6): every lane, mark and finding with
    /// named members, in the page's order.
    static func document(_ reports: [TimelineReport]) -> JSONValue {
        .object(
            JSONObject([
                ("timelineVersion", JSONValue(Int64(2))),
                ("kind", .string("timeline")),
                (
                    "ensembles",
                    .array(
                        reports.map { report in
                            .object(
                                JSONObject([
                                    ("identifier", .string(report.identifier)),
                                    (
                                        "lanes",
                                        .array(
                                            report.lanes.map { .object(JSONObject([("store", .string($0.store)), ("registered", .bool($0.registered))])) })
                                    ),
                                    ("marks", .array(report.marks.map(Self.json))),
                                    ("findings", .array(report.findings.map { Verify.json($0.diagnostic) })),
                                    ("growth", report.growth),
                                ]))
                        })
                ),
            ]))
    }

    static func json(_ mark: TimelineReport.Mark) -> JSONValue {
        .object(
            JSONObject([
                ("file", .string(mark.file)), ("store", .string(mark.store)), ("revision", JSONValue(mark.revision)),
                ("globalCount", JSONValue(mark.globalCount)), ("timestamp", .number(JSONNumber(mark.timestamp))),
                ("type", JSONValue(Int64(mark.type))), ("inserts", JSONValue(Int64(mark.inserts))), ("updates", JSONValue(Int64(mark.updates))),
                ("deletes", JSONValue(Int64(mark.deletes))), ("modelVersion", mark.modelVersion.map(JSONValue.string) ?? .null),
                ("spans", .array(mark.spans.map(JSONValue.string))), ("onlyOnDevice", .bool(mark.onlyOnDevice)),
            ]))
    }
}
