import ArgumentParser
import Foundation
import JSONDocument
import EnsembleModel
import EventCodecs
import MergeEngine
import CloudFolder

struct Rebase: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Fold a cloud folder's events into one new baseline, written as a new folder (Spec/merge.md 13).",
        discussion: """
        NEW (which must not exist) receives the store registrations, the new baseline, the events \\
        above the cutoff and the data files still referenced. Before anything is published, the new \\
        folder and PATH are both merged and must give the same state. PATH is never changed. \\
        Exit status: 0 written or nothing to fold, 1 refused, 2 usage error.
        """
    )

    @OptionGroup var options: ReadingOptions

    @Argument(help: "The cloud folder: an ensemble folder or a root holding one.")
    var path: String

    @Option(name: .long, help: "The new folder to create.")
    var out: String

    @Option(name: .long, help: "The store that owns the new baseline (default: the store of the last folded event).")
    var store: String?

    @Option(name: .long, help: "The encoding of the new baseline: json or binary.")
    var encoding = "json"

    @Flag(name: .long, help: "Print the summary as JSON.")
    var json = false

    func validate() throws {
        try options.validateModelVersion()
        guard encoding == "json" || encoding == "binary" else { throw ValidationError("--encoding takes json or binary") }
    }

    func run() throws {
        let outURL = URL(fileURLWithPath: out).standardizedFileURL
        let pathURL = URL(fileURLWithPath: path).standardizedFileURL
        guard !Converter.exists(outURL) else {
            writeStandardError("rebase.destination-exists: \(out) already exists; rebase never overwrites")
            throw ToolExit(status: .usage)
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: outURL.deletingLastPathComponent().path, isDirectory: &isDirectory), isDirectory.boolValue,
              outURL.path != pathURL.path, !outURL.path.hasPrefix(pathURL.path + "/") else {
            writeStandardError("logtool: \(out): the new folder needs an existing parent folder outside \(path)")
            throw ToolExit(status: .usage)
        }
        let reader = try options.reader()
        let listings = try scanOrExit(path)
        guard listings.count == 1, let listing = listings.first else {
            writeStandardError(listings.isEmpty ? "logtool: \(path): not a cloud folder" : "merge.several-ensembles: \(path) holds more than one ensemble; rebase one at a time")
            throw ToolExit(status: .usage)
        }
        let input = try MergeInputs.gather([path], reader: reader, summarize: true)
        let analysis = MergeEngine.analyze(input)
        guard analysis.problems.isEmpty else {
            MergeInputs.report(analysis.problems)
            throw ToolExit(status: .problemsFound)
        }
        let plan: RebasePlan?
        do {
            plan = try RebasePlan(analysis)
        } catch {
            writeStandardError("\(error.code): \(error.message)")
            throw ToolExit(status: .problemsFound)
        }
        var state = StoreState(model: input.model)
        try apply(analysis.baselines, to: &state, input)
        guard let plan, let lastFoldedStore = plan.lastFoldedStore else {
            report(baseline: nil, cutoff: nil, folded: 0, kept: 0, live: state.liveObjectCount)
            return
        }
        let owner = store ?? lastFoldedStore
        guard plan.revisionSet[owner] != nil else {
            writeStandardError("logtool: --store \(owner) is not in the new baseline's revision set (\(plan.revisionSet.stores.joined(separator: ", ")))")
            throw ToolExit(status: .usage)
        }
        do {
            try plan.forEachFoldedPage { page in try apply(page, to: &state, input) }
        } catch let error as FormatError {
            writeStandardError("logtool: \(error)")
            throw ToolExit(status: .problemsFound)
        }
        let baseline = state.baseline(
            uniqueIdentifier: BaselineNaming.uniqueIdentifier(for: plan.revisionSet), storeIdentifier: owner, globalCount: plan.cutoff,
            timestamp: (analysis.baselines.map(\.event.timestamp) + [plan.foldedTimestamp].compactMap { $0 }).max() ?? 0,
            modelVersion: input.modelHash ?? plan.foldedModelVersion ?? analysis.baselines.last(where: { $0.event.modelVersion != nil })?.event.modelVersion,
            revisionSet: plan.revisionSet)
        let name = BaselineNaming.fileName(globalCount: plan.cutoff, uniqueIdentifier: baseline.uniqueIdentifier, store: owner)
        let inside = listing.displayPath == "." ? "" : listing.displayPath + "/"
        do {
            try write(baseline, named: name, plan: plan, listing: listing, input: input, reader: reader, to: outURL)
        } catch let failure as ConversionFailure {
            for problem in failure.errors {
                let code = problem.code == .rebaseVerificationFailed || problem.code == .rebaseDestinationExists ? problem.code : .rebaseWriteFailed
                writeStandardError("\(code): \(problem.message)")
            }
            throw ToolExit(status: failure.usage ? .usage : .problemsFound)
        }
        report(baseline: inside + "baselines/" + name, cutoff: plan.cutoff, folded: plan.foldedCount, kept: plan.kept.count, live: state.liveObjectCount)
    }

    private func apply(_ events: [SourcedEvent], to state: inout StoreState, _ input: MergeInput) throws {
        do {
            try MergeEngine.replay(events, into: &state, input)
        } catch {
            MergeInputs.report(error.problems)
            throw ToolExit(status: .problemsFound)
        }
    }

    /// Stages the new folder, reads it back, checks that it merges to PATH's state, publishes it.
    private func write(_ baseline: Event, named name: String, plan: RebasePlan, listing: EnsembleListing, input: MergeInput,
                       reader: EventFileReader, to outURL: URL) throws {
        var staging = try StagingArea(for: outURL)
        defer { staging.discard() }
        let ensemble = listing.displayPath == "." ? staging.url : staging.url.appendingPathComponent(listing.displayPath)
        for folder in EnsembleSubfolder.allCases { try StagingArea.createFolder(ensemble.appendingPathComponent(folder.rawValue)) }
        let bytes = encoding == "binary" ? try V2BinaryEncoder().encode(baseline) : try V2JSONEncoder().encode(baseline)
        let baselineURL = ensemble.appendingPathComponent("baselines/\(name)")
        try StagingArea.write(bytes, to: baselineURL)
        // Every copy of a kept event (an event delivered twice has two files), and its data files.
        let keptRevisions = Set(plan.kept.map { ExactString("\($0.event.storeIdentifier)\u{0}\($0.event.revision)") })
        let base = listing.displayPath == "." ? path : Converter.join(path, listing.displayPath)
        var copies: [String] = []
        var dataFiles = Set(SourcedEvent(event: baseline, file: name).dataFileReferences)
        // Copies of a kept event claim the same revision, so they have its global count, above the cutoff.
        for sourced in try input.eventStore?.events(globalCountAbove: plan.cutoff) ?? input.events where keptRevisions.contains(ExactString("\(sourced.event.storeIdentifier)\u{0}\(sourced.event.revision)")) {
            copies += (sourced.parts.isEmpty ? [sourced.file] : sourced.parts).map { String(String($0.dropFirst(base.count)).trimmingPrefix("/")) }
            dataFiles.formUnion(sourced.dataFileReferences)
        }
        for entry in listing.entries {
            switch entry.entry {
            case .storeRegistration: copies.append(entry.path)
            case .dataFile(let file) where dataFiles.contains(file): copies.append(entry.path)
            default: break
            }
        }
        for relative in copies {
            let source = listing.url.appendingPathComponent(relative)
            let content = try readAll(source)
            try StagingArea.write(content, to: ensemble.appendingPathComponent(relative))
            guard try readAll(ensemble.appendingPathComponent(relative)) == content else {
                throw ConversionFailure(errors: [FormatError(.rebaseVerificationFailed, "\(relative) does not read back as the bytes copied")])
            }
        }
        guard (try? reader.readEvent(file: baselineURL.path, parts: [])) == baseline else {
            throw ConversionFailure(errors: [FormatError(.rebaseVerificationFailed, "the new baseline does not read back as the event written")])
        }
        let before = try mergedDocument(input)
        let after = try mergedDocument(try MergeInputs.gather([staging.url.path], reader: reader, summarize: true))
        guard before == after else {
            throw ConversionFailure(errors: [FormatError(.rebaseVerificationFailed, "the new folder merges to another state than \(path); nothing was written")])
        }
        try staging.commit()
    }

    private func readAll(_ url: URL) throws -> [UInt8] {
        do {
            return Array(try Data(contentsOf: url))
        } catch {
            throw ConversionFailure(errors: [FormatError(.rebaseWriteFailed, "\(url.path): \(error.localizedDescription)")])
        }
    }

    private func mergedDocument(_ input: MergeInput) throws -> [UInt8] {
        do {
            return try MergeEngine.merge(input).documentBytes()
        } catch let failure as MergeFailure {
            throw ConversionFailure(errors: [FormatError(.rebaseVerificationFailed, "a merge for the verification failed: \(failure.problems.map(\.message).joined(separator: "; "))")])
        }
    }

    private func report(baseline: String?, cutoff: Int64?, folded: Int, kept: Int, live: Int) {
        if json {
            writeJSON(.object(JSONObject([
                ("baseline", baseline.map(JSONValue.string) ?? .null),
                ("cutoffGlobalCount", cutoff.map { JSONValue($0) } ?? .null),
                ("foldedEvents", JSONValue(Int64(folded))),
                ("keptEvents", JSONValue(Int64(kept))),
                ("liveObjects", JSONValue(Int64(live))),
                ("written", .bool(baseline != nil)),
            ])))
        } else if let baseline, let cutoff {
            writeStandardOutput("Folded \(folded) events (global count up to \(cutoff)) into \(baseline) with \(live) live objects; kept \(kept) events; wrote \(out).\n")
        } else {
            writeStandardOutput("Nothing to fold: every event is covered by the baselines; nothing was written.\n")
        }
    }
}
