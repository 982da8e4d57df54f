import EnsemblesToolkit
import ArgumentParser
import Foundation
import SyntheticHistory

struct Generate: ParsableCommand, HasOutputOptions {
    static let configuration = CommandConfiguration(
        commandName: "generate",
        abstract: "Write a synthetic cloud folder with its model, deterministically from a seed.",
        discussion: """
            OUT (which must not exist) receives Model.xcdatamodeld and cloud/Generated/ with store \
            registrations, events (inserts, updates, deletes, to-many and ordered to-many edits, \
            concurrent saves) and data files. The same options always give the same bytes. \
            Merge the result with: logtool merge OUT/cloud --model OUT/Model.xcdatamodeld

            --baseline also writes baselines/ with a baseline that inserts every object and names \
            every store at revision 0 (as if a rebase had folded each store's first save); the events \
            continue from it at revision 1. Devices integrate only from a baseline that names their \
            store, so with it `merge --as-store STORE` integrates the whole history, as a merge does.

            Examples:
              logtool generate /tmp/g --stores 10 --objects 5000 --changes 100000
              logtool generate /tmp/g --encoding binary --seed 7
              logtool generate /tmp/g --baseline && logtool merge /tmp/g/cloud --as-store STORE
            """
    )

    @OptionGroup(title: "Output Options") var outputOptions: OutputOptions

    @Argument(help: "The folder to create.", completion: .directory)
    var out: String

    @Flag(name: .long, help: "Replace the folder if it exists (only once the new one is complete).")
    var force = false

    @Option(name: .long, help: "Number of stores (devices).")
    var stores = 3

    @Option(name: .long, help: "Number of distinct objects the history works on.")
    var objects = 1_000

    @Option(name: .long, help: "Number of object changes in all events together.")
    var changes = 10_000

    @Option(name: .long, help: "Mean number of object changes per event.")
    var changesPerEvent = 50

    @Option(name: .long, help: "Seed of the random choices.")
    var seed: UInt64 = 1

    @Option(name: .long, help: "Size of the binary attribute some notes get; above 10,000 bytes it goes to data/. 0: none.")
    var blobBytes = 0

    @Option(name: .long, help: "Probability (0...1) that a store saves without merging the others' latest events first.")
    var concurrency = 0.2

    @Option(name: .long, help: "The dialect of the events.")
    var format: TargetDialect = .v2

    @Option(name: .long, help: "The encoding of v2 events.")
    var encoding: EventEncodingOption = .json

    @Flag(name: .long, help: "Start the history from a baseline that names every store (v2 only; see below).")
    var baseline = false

    @Flag(name: .long, help: "Print the summary as JSON.")
    var json = false

    func validate() throws {
        guard stores >= 1, stores <= 1_000 else { throw ValidationError("--stores takes 1 to 1000") }
        guard objects >= 1 else { throw ValidationError("--objects must be at least 1") }
        guard changes >= 0 else { throw ValidationError("--changes must not be negative") }
        guard changesPerEvent >= 1 else { throw ValidationError("--changes-per-event must be at least 1") }
        guard blobBytes >= 0 else { throw ValidationError("--blob-bytes must not be negative") }
        guard (0...1).contains(concurrency) else { throw ValidationError("--concurrency takes a number from 0 to 1") }
        guard format == .v2 || encoding == .json else { throw ValidationError("--encoding binary writes v2 events; it cannot be used with --format v1") }
        guard format == .v2 || !baseline else { throw ValidationError("--baseline writes a v2 baseline; it cannot be used with --format v1") }
        guard format == .v2 || blobBytes <= 10_000 else {
            throw ValidationError("v1 events cannot refer to data files: use --blob-bytes 10000 or less with --format v1")
        }
    }

    func run() throws {
        var settings = GeneratorSettings()
        settings.stores = stores
        settings.objects = objects
        settings.changes = changes
        settings.changesPerEvent = changesPerEvent
        settings.seed = seed
        settings.blobBytes = blobBytes
        settings.concurrency = concurrency
        settings.format = format == .v1 ? .v1JSON : (encoding == .binary ? .v2Binary : .v2JSON)
        settings.baseline = baseline
        var generator = HistoryGenerator(settings: settings)
        let summary: GeneratorSummary
        do throws(ConversionFailure) {
            summary = try generator.write(to: out, replacing: force)
        } catch {
            writeErrors(error.errors, json: json)
            throw ToolExit(status: error.usage ? .usage : .problemsFound)
        }
        if json {
            // `baseline` only with --baseline: the summary without it is as it was.
            let baselineMembers: [(String, JSONValue)] =
                summary.baseline.map { [("baseline", .string($0)), ("baselineObjects", JSONValue(Int64(summary.baselineObjects)))] } ?? []
            writeJSON(
                .object(
                    JSONObject(
                        [
                            ("out", .string(out)),
                            ("events", JSONValue(Int64(summary.events))),
                            ("objectChanges", JSONValue(Int64(summary.objectChanges))),
                            ("inserts", JSONValue(Int64(summary.inserts))),
                            ("updates", JSONValue(Int64(summary.updates))),
                            ("deletes", JSONValue(Int64(summary.deletes))),
                            ("dataFiles", JSONValue(Int64(summary.dataFiles))),
                            ("bytes", JSONValue(summary.bytes)),
                            ("modelHash", .string(summary.modelHash)),
                        ] + baselineMembers)))
        } else {
            let baselineText = summary.baseline.map { " from a baseline of \(summary.baselineObjects) objects (\(escaped($0)))" } ?? ""
            writeStandardOutput(
                """
                Generated \(summary.events) events with \(summary.objectChanges) object changes (\(summary.inserts) inserts, \
                \(summary.updates) updates, \(summary.deletes) deletes) and \(summary.dataFiles) data files, \(summary.bytes) bytes, in \(escaped(out))\
                \(baselineText).

                """)
        }
    }
}
