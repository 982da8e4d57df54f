import Foundation
import Testing
import JSONDocument
import EnsemblesToolkit

/// The library's entry point, used the way an app or a server would: no command line involved.
@Suite("Ensemble: the public operations")
struct EnsembleAPITests {
    static func fixture(_ path: String) -> URL { Run.packageRoot.appendingPathComponent(path) }

    @Test("merge gives the golden case's state document, byte for byte")
    func merge() throws {
        let state = try Ensemble(at: Self.fixture("Fixtures/merge/baseline-covers/cloud/E")).merge()
        #expect(try state.documentBytes() == Array(try Data(contentsOf: Self.fixture("Fixtures/merge/baseline-covers/expected/state.json"))))
    }

    @Test("a state handed over while the checks run is the merge's only when the merge says so; either way the merge gives the golden state")
    func whileChecking() throws {
        var takenAsHandedOver = 0
        for (testCase, arguments, exitCode) in MergeFixtureTests.singleFolderCases where exitCode == 0 {
            var handedOver: [UInt8]?
            var warnings: [FormatError] = []
            let folder = testCase.folder.appendingPathComponent(arguments[0])
            let merged = try Ensemble(inputs: [folder.path]).merge(warnings: &warnings) { handedOver = try? $0.documentBytes() }
            let expected = Array(try Data(contentsOf: testCase.folder.appendingPathComponent("expected/state.json")))
            #expect(try merged.state.documentBytes() == expected, "\(testCase.name)")
            if merged.isReplayedState {
                #expect(handedOver == expected, "\(testCase.name): the state handed over is not the merge's")
                takenAsHandedOver += 1
            }
        }
        // The usual outcome; a handed-over state the analysis refuses is tested on the engine
        // (EventStoreTests), no golden case of one folder leads to it.
        #expect(takenAsHandedOver >= 10)
    }

    @Test("inspect describes a data model and an app's Core Data store as the command line does")
    func inspectModelAndStore() throws {
        let model = try Ensemble(at: Self.fixture("Fixtures/models/Inheritance.xcdatamodeld")).inspect()
        #expect(model[JSONPointer(["kind"])] == .string("model"))
        #expect(model[JSONPointer(["errors"])] == .array([]))
        #expect(model[JSONPointer(["versions"])]?.arrayValue?.isEmpty == false)
        let missing = try Ensemble(at: Self.fixture("Fixtures/models/Inheritance.xcdatamodeld")).inspect(modelVersion: "no such version")
        #expect(missing[JSONPointer(["errors"])]?.arrayValue?.count == 1 && missing[JSONPointer(["modelHash"])] == .null)
        let path = "Fixtures/external/coredata-sqlite/Accounts3.sqlite"
        let store = try Ensemble(at: Self.fixture(path)).inspect()
        #expect(store[JSONPointer(["kind"])] == .string("coreDataStore"))
        let expected = try JSONParser.parse(try Data(contentsOf: Self.fixture("Fixtures/coredata/expected/inspect-Accounts3.sqlite.json")))
        #expect(store[JSONPointer(["entities"])] == expected[JSONPointer(["entities"])])
    }

    @Test("a failed integrity check is an integrity error with every finding")
    func integrity() throws {
        do {
            _ = try Ensemble(at: Self.fixture("Fixtures/merge/revision-gap-200/cloud/E")).merge()
            Issue.record("the merge should have failed")
        } catch {
            #expect(error.kind == .integrity)
            #expect(error.problems.map(\.code.rawValue) == Array(repeating: "merge.revision-gap", count: 3))
            #expect(error.problems.map(\.number) == [200, 200, 200])
        }
    }

    @Test("a missing input is a usage error that names it")
    func usage() {
        #expect(throws: EnsembleError.self) { try Ensemble(inputs: ["/nonexistent-input"]).merge() }
        do {
            _ = try Ensemble(inputs: ["/nonexistent-input"]).merge()
        } catch {
            #expect(error.kind == .usage)
            #expect(error.problems.first?.files == ["/nonexistent-input"])
        }
    }

    @Test("inspect, verify and history report on a folder without writing to it")
    func reports() throws {
        let ensemble = Ensemble(at: Self.fixture("Fixtures/folders/example/cloud"))
        let report = try ensemble.inspect()
        #expect(report[JSONPointer(["ensembles", "0", "identifier"])] == .string("MainStore"))
        var seen: [String] = []
        let verification = try ensemble.verify { name, _ in seen.append(name) }
        #expect(seen == ["MainStore"])
        #expect(verification.first?.diagnostics.isEmpty == false)
        var warnings: [FormatError] = []
        let history = try Ensemble(at: Self.fixture("Fixtures/merge/baseline-covers/cloud/E")).history(entity: "Item", id: "i1", warnings: &warnings)
        #expect(history.entity == "Item" && history.id == "i1" && history.live)
        // The case's hand-derived state (Fixtures/merge/README.md) holds i1's final values.
        let state = try JSONParser.parse(Array(try Data(contentsOf: Self.fixture("Fixtures/merge/baseline-covers/expected/state.json"))))
        let expected = state[JSONPointer(["entities", "Item", "i1"])]?.objectValue
        #expect(JSONObject(history.finalProperties.map { ($0.name, $0.value) }) == expected)
        #expect(history.changes.first?.change == .insert)
    }

    @Test("a typed history encodes to the published schema and decodes back to itself")
    func historyCodable() throws {
        var warnings: [FormatError] = []
        let history = try Ensemble(at: Self.fixture("Fixtures/merge/baseline-covers/cloud/E")).history(entity: "Item", id: "i1", warnings: &warnings)
        let encoded = try JSONEncoder().encode(history)
        let document = try JSONParser.parse(Array(encoded))
        #expect(try BundledSchema.history.validate(document) == [])
        #expect(document == history.document)
        let decoded = try JSONDecoder().decode(ObjectHistory.self, from: encoded)
        #expect(decoded.entity == history.entity && decoded.id == history.id && decoded.live == history.live)
        #expect(decoded.changes == history.changes)
        // JSON objects are unordered to a Decoder: the final properties come back in its order.
        #expect(decoded.finalProperties.sorted { $0.name < $1.name } == history.finalProperties.sorted { $0.name < $1.name })
        // A document of another kind is refused, not read as an empty history.
        var other = try #require(document.objectValue)
        other["kind"] = .string("inspect")
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(ObjectHistory.self, from: Data(JSONWriter().bytes(.object(other)))) }
    }

    @Test("convert and rebase write new folders that merge to the same state")
    func convertAndRebase() throws {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let source = Ensemble(at: Self.fixture("Fixtures/merge/baseline-covers/cloud/E"))
        // The case's hand-derived state (Fixtures/merge/README.md), not the code's own merge.
        let expected = Array(try Data(contentsOf: Self.fixture("Fixtures/merge/baseline-covers/expected/state.json")))
        #expect(try source.merge().documentBytes() == expected)
        let converted = scratch.appendingPathComponent("binary")
        let report = try source.convert(to: converted.path, format: .v2Binary)
        #expect(!report.files.isEmpty)
        #expect(try Ensemble(at: converted).merge().documentBytes() == expected)
        let rebased = scratch.appendingPathComponent("rebased")
        let summary = try source.rebase(to: rebased)
        #expect(summary.written)
        #expect(try Ensemble(at: rebased).merge().documentBytes() == expected)
    }
}
