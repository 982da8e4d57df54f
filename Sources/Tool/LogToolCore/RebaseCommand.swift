import ArgumentParser
import Foundation
import EnsemblesToolkit

struct Rebase: ParsableCommand, HasOutputOptions {
    static let configuration = CommandConfiguration(
        commandName: "rebase",
        abstract: "Fold a cloud folder's events into one new baseline, written as a new folder (Spec/merge.md 13).",
        discussion: """
            NEW (which must not exist) receives the store registrations, the new baseline, the events \
            above the cutoff and the data files still referenced. Before anything is published, the new \
            folder is read back and checked to merge to exactly PATH's state, without merging it \
            again (Spec/merge.md 13.7). PATH is never changed. \
            Exit status: 0 written or nothing to fold, 1 refused, 2 usage error.

            Examples:
              logtool rebase cloud/MainStore --out rebased --model Model.xcdatamodeld
              logtool rebase cloud/MainStore --out rebased --encoding binary --json
            """
    )

    @OptionGroup(title: "Output Options") var outputOptions: OutputOptions

    @OptionGroup var options: ReadingOptions

    @Argument(help: "The cloud folder: an ensemble folder or a root holding one.", completion: .directory)
    var path: String

    @Option(name: .long, help: "The new folder to create.", completion: .directory)
    var out: String

    @Option(name: .long, help: "The store that owns the new baseline (default: the store of the last folded event).")
    var store: String?

    @Option(name: .long, help: "The encoding of the new baseline.")
    var encoding: EventEncodingOption = .json

    @Flag(name: .long, help: "Replace the --out folder if it exists (only once the new one is written and verified).")
    var force = false

    @Flag(name: .long, help: "Print the summary as JSON.")
    var json = false

    func validate() throws {
        try options.validateModelVersion()
    }

    func run() throws {
        let ensemble = Ensemble(inputs: [path], options: try options.ensembleOptions(json: json))
        let summary: RebaseSummary
        do {
            summary = try ensemble.rebase(to: URL(fileURLWithPath: out), store: store, binary: encoding == .binary, replacing: force)
        } catch {
            throw reportAndExit(error, json: json)
        }
        report(baseline: summary.baseline, cutoff: summary.cutoffGlobalCount, folded: summary.foldedEvents, kept: summary.keptEvents, live: summary.liveObjects)
    }

    private func report(baseline: String?, cutoff: Int64?, folded: Int, kept: Int, live: Int) {
        if json {
            writeJSON(
                .object(
                    JSONObject([
                        ("baseline", baseline.map(JSONValue.string) ?? .null),
                        ("cutoffGlobalCount", cutoff.map { JSONValue($0) } ?? .null),
                        ("foldedEvents", JSONValue(Int64(folded))),
                        ("keptEvents", JSONValue(Int64(kept))),
                        ("liveObjects", JSONValue(Int64(live))),
                        ("written", .bool(baseline != nil)),
                    ])))
        } else if let baseline, let cutoff {
            writeStandardOutput(
                "Folded \(folded) events (global count up to \(cutoff)) into \(escaped(baseline)) with \(live) live objects; kept \(kept) events; wrote \(escaped(out)).\n"
            )
        } else {
            writeStandardOutput("Nothing to fold: every event is covered by the baselines; nothing was written.\n")
        }
    }
}
