import EnsembleModel
import EventCodecs
import Foundation
import JSONDocument
import Testing

/// `generate --baseline`: a folder a device can integrate (Spec/merge.md 15). What is expected
/// follows from the option's promise (a baseline inserting every object, naming every store at 0,
/// the events continuing from it) and from merge.md 4.5, 5.4, 5.5 and 15.4, not from a run.
@Suite("generate --baseline")
struct GenerateBaselineTests {
    static let objects = 40

    /// The codes of the warnings and errors of a `verify --json` run. Expected: none, except with concurrent saves the
    /// reinserts verify finds in every generated folder (the generator inserts an object again
    /// when it is not live in the whole history, which the inserting store may not know yet).
    static func warnings(_ run: Run) throws -> [String] {
        let document = try JSONParser.parse(Array(run.stdout.utf8))
        let diagnostics = document[JSONPointer(["ensembles", "0", "diagnostics"])]?.arrayValue ?? []
        return diagnostics.filter { $0[JSONPointer(["severity"])] != .string("info") }.compactMap { $0[JSONPointer(["code"])]?.stringValue }
    }

    @Test(
        "the folder verifies clean, and a device of each store integrates every event to the merge's state",
        arguments: [("json", "0"), ("binary", "0.4")])
    func devices(encoding: String, concurrency: String) throws {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        func run(_ arguments: String...) throws -> Run { try Run(arguments: arguments, in: scratch) }
        // Notes with attachments in data files, so the baseline and the events reference data/
        // (the 210 check of 15.3), and --model below so the 204 check runs too.
        let generated = try run(
            "generate", "g", "--no-progress", "--stores", "3", "--objects", "\(Self.objects)", "--changes", "1200", "--seed", "4",
            "--blob-bytes", "20000", "--concurrency", concurrency, "--encoding", encoding, "--baseline")
        #expect(generated.status == 0, "\(generated.stderr)")
        let ensemble = scratch.appendingPathComponent("g/cloud/Generated")
        func names(_ folder: String) throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: ensemble.appendingPathComponent(folder).path).sorted {
                $0.utf8.lexicographicallyPrecedes($1.utf8)
            }
        }
        let stores = try names("stores")
        #expect(stores.count == 3)

        // One baseline: every object inserted, every store at revision 0.
        let baselines = try names("baselines")
        try #require(baselines.count == 1)
        let bytes = Array(try Data(contentsOf: ensemble.appendingPathComponent("baselines/\(baselines[0])")))
        let baseline = encoding == "json" ? try V2JSONDecoder().decodeEvent(try JSONParser.parse(bytes)).event : try V2BinaryDecoder().decode(bytes)
        #expect(baseline.type == .baseline)
        #expect(baseline.revisionSet == RevisionSet(pairs: stores.map { ($0, 0) }))
        #expect(baseline.objectChanges.count == Self.objects)
        #expect(baseline.objectChanges.allSatisfy { $0.type == .insert })
        #expect(Set(baseline.objectChanges.map(\.globalIdentifier)).count == Self.objects)

        // The events of each store continue from it: revisions 1, 2, ... without a gap (5.4), so
        // none is covered (4.5).
        let events = try names("events")
        #expect(events.count > 20)
        var revisions: [String: [Int64]] = [:]
        for name in events {
            let parts = name.dropLast(".cdeevent".count).split(separator: "_")
            try #require(parts.count == 3)
            revisions[String(parts[1]), default: []].append(try #require(Int64(parts[2])))
        }
        #expect(Set(revisions.keys) == Set(stores))
        for (store, list) in revisions { #expect(list.sorted() == Array(1...Int64(list.count)), "\(store)") }

        let allowed: Set<String> = concurrency == "0" ? [] : ["verify.reinserted-object"]
        let verified = try run("verify", "--json", "g/cloud")
        #expect(verified.status == 0, "\(verified.stdout)")
        #expect(Set(try Self.warnings(verified)).isSubset(of: allowed), "\(verified.stdout)")
        let merged = try run("merge", "g/cloud", "--model", "g/Model.xcdatamodeld")
        #expect(merged.status == 0, "\(merged.stderr)")
        let state = try JSONParser.parse(Array(merged.stdout.utf8))
        for store in stores {
            let device = try run("merge", "--as-store", store, "--json", "--model", "g/Model.xcdatamodeld", "g/cloud")
            // 15.4: the baseline takes part and names every store (step 3), nothing fails a basic
            // check (step 5), no store has a gap (step 6), every event's revision set names the
            // others at 0 (the baseline's) or at a revision present and not held back (step 7);
            // so every event is integrated, and the state is the merge's (step 8). Exit 0 (15.6).
            #expect(device.status == 0, "\(device.stderr)")
            #expect(device.stderr.isEmpty, "\(device.stderr)")
            let document = try JSONParser.parse(Array(device.stdout.utf8))
            func member(_ name: String) -> JSONValue? { document[JSONPointer(["device", name])] }
            #expect(member("store") == .string(store))
            #expect(member("outcome") == .string("integrates"))
            #expect(member("stop") == .null)
            #expect(member("baselines") == .array([.string("g/cloud/Generated/baselines/\(baselines[0])")]))
            #expect(member("heldBackBaselines") == .array([]))
            #expect(member("heldBack") == .array([]))
            #expect(member("integrated") == JSONValue(Int64(events.count)))
            #expect(member("covered") == JSONValue(Int64(0)))
            #expect(member("pending") == .array([]))
            #expect(member("informativeCodes") == .array([]))
            #expect(document[JSONPointer(["state"])] == state)
            // verify --as-store adds nothing: no event is held back and nothing stops (15.6).
            let seen = try run("verify", "--json", "--as-store", store, "g/cloud")
            #expect(seen.status == 0, "\(seen.stdout)")
            #expect(Set(try Self.warnings(seen)).isSubset(of: allowed), "\(seen.stdout)")
        }
    }

    @Test("--baseline writes a v2 baseline: with --format v1 it is a usage error and writes nothing")
    func notV1() throws {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let run = try Run(arguments: ["generate", "g", "--format", "v1", "--baseline", "--changes", "10"], in: scratch)
        #expect(run.status == 2)
        #expect(!FileManager.default.fileExists(atPath: scratch.appendingPathComponent("g").path))
    }
}
