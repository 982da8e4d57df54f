import Foundation
import Testing
import JSONDocument
import SchemaValidation
import DataModel
import CoreDataStore
import EnsemblesToolkit

/// Real Core Data stores (Fixtures/external/coredata-sqlite, written by Apple devices) and the
/// original framework's model-version check against them (Spec/model.md 8, Spec/merge.md 5.7).
/// Every expected value comes from scripts/coredata-expected.py (Python's sqlite3 and plistlib).
@Suite("Core Data stores and the original's model versions")
struct CoreDataStoreTests {
    static let stores = ["Accounts3.sqlite", "DataUsage.sqlite", "NoteStore.sqlite", "kik.sqlite", "knowledgec-10.14.db", "netusage.sqlite"]

    static func storePath(_ store: String) -> String { "Fixtures/external/coredata-sqlite/\(store)" }

    static func fixture(_ path: String) throws -> JSONValue {
        try JSONParser.parse(Array(try Data(contentsOf: Run.packageRoot.appendingPathComponent("Fixtures/\(path)"))))
    }

    /// The modelVersion values scripts/coredata-expected.py built from a store's hashes:
    /// (label, value, form) for the store's own version ("known") or a changed one ("unknown").
    static func modelVersions(_ store: String, _ which: String) throws -> [(label: String, value: String, form: String)] {
        let versions = try fixture("coredata/model-versions.json")
        func value(_ pointer: [String]) throws -> String {
            try #require(versions[JSONPointer([store, which] + pointer)]?.stringValue)
        }
        return [
            ("property list", try value(["propertyList"]), "property-list"),
            ("md5, grouped descriptions", try value(["md5", "grouped"]), "md5"),
            ("md5, length-prefixed descriptions", try value(["md5", "length-prefixed"]), "md5"),
        ]
    }

    /// `scratch/cloud/E` with store A registered and one save event naming `modelVersion`.
    static func folder(modelVersion: String, in scratch: URL) throws -> URL {
        let ensemble = scratch.appendingPathComponent("cloud/E")
        for sub in ["stores", "events"] { try FileManager.default.createDirectory(at: ensemble.appendingPathComponent(sub), withIntermediateDirectories: true) }
        let registration = """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>leechDate</key><date>2024-05-01T10:00:00Z</date><key>storeIdentifier</key><string>A</string></dict></plist>
            """
        try Data(registration.utf8).write(to: ensemble.appendingPathComponent("stores/A"))
        let change = JSONValue.object(
            JSONObject([
                ("globalIdentifier", .string("t1")), ("type", JSONValue(Int64(100))),
                ("properties", .array([.object(JSONObject([("propertyName", .string("title")), ("type", JSONValue(Int64(0))), ("value", .string("one"))]))])),
            ]))
        let event = JSONValue.object(
            JSONObject([
                ("changesByEntity", .object(JSONObject([("Task", .array([change]))]))), ("globalCount", JSONValue(Int64(0))),
                ("modelVersion", .string(modelVersion)), ("revisionsByStoreIdentifier", .object(JSONObject([("A", JSONValue(Int64(0)))]))),
                ("storeIdentifier", .string("A")), ("timestamp", .string("100.0")), ("type", JSONValue(Int64(200))), ("uniqueIdentifier", .string("A-0")),
            ]))
        try Data(JSONWriter().string(event).utf8).write(to: ensemble.appendingPathComponent("events/0_A_0.cdeevent"))
        return scratch.appendingPathComponent("cloud")
    }

    @Test("inspect --json on every real store gives the document derived with Python, valid against the schema, and writes nothing", arguments: stores)
    func inspectStore(store: String) throws {
        let folder = Run.packageRoot.appendingPathComponent("Fixtures/external/coredata-sqlite")
        let before = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        let run = try Run("inspect", "--json", Self.storePath(store))
        #expect(run.status == 0, "\(run.stderr)")
        let document = try JSONParser.parse(Array(run.stdout.utf8))
        #expect(document == (try Self.fixture("coredata/expected/inspect-\(store).json")))
        #expect(try BundledSchema.inspect.validator().validate(document).isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == before)
        let text = try Run("inspect", Self.storePath(store))
        #expect(text.status == 0 && text.stdout.hasPrefix("Core Data store \(Self.storePath(store))"))
    }

    @Test("a file that is not a Core Data store is reported with its code and exit 1; a truncated one too")
    func unreadableStore() throws {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        // An SQLite database without Core Data's tables.
        let plain = scratch.appendingPathComponent("plain.sqlite")
        let bytes = try Data(contentsOf: Run.packageRoot.appendingPathComponent(Self.storePath("kik.sqlite")))
        try bytes.prefix(4096).write(to: plain)
        let run = try Run("inspect", "--json", plain.path)
        #expect(run.status == 1)
        #expect(try JSONParser.parse(Array(run.stdout.utf8))[JSONPointer(["errors", "0", "code"])] == .string("coredata.unreadable-store"))
        do {
            _ = try CoreDataStoreMetadata.read(path: scratch.appendingPathComponent("missing.sqlite").path)
            Issue.record("a missing store was read")
        } catch {
            #expect(error.code == .coreDataUnreadableStore)
        }
        let merge = try Run("merge", "--store-metadata", plain.path, "Fixtures/merge/unknown-model-version-204/cloud")
        #expect(merge.status == 2 && merge.stderr.contains("coredata.unreadable-store"))
    }

    @Test(
        "an event whose property-list or md5 model version is none of a real store's is 204; the store's own passes, in each description style",
        arguments: stores)
    func unknownModelVersion(store: String) throws {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        for (which, status) in [("known", Int32(0)), ("unknown", Int32(1))] {
            for version in try Self.modelVersions(store, which) {
                let case_ = scratch.appendingPathComponent("\(which)-\(version.label)")
                let cloud = try Self.folder(modelVersion: version.value, in: case_)
                let run = try Run("merge", "--store-metadata", Self.storePath(store), cloud.path)
                #expect(run.status == status, "\(store), \(which) \(version.label): \(run.stderr)")
                let finding = run.stderr.split(separator: "\n").first { $0.hasPrefix("merge.unknown-model-version (204)") }
                if which == "unknown" {
                    #expect(finding?.contains("form=\(version.form)") == true, "\(store), \(version.label): \(run.stderr)")
                } else {
                    #expect(finding == nil)
                    // The library says which form and description style matched.
                    let metadata = try CoreDataStoreMetadata.read(path: Run.packageRoot.appendingPathComponent(Self.storePath(store)).path)
                    let check = ModelVersionCatalog([metadata.modelVersion]).check(version.value)
                    #expect(check.form.rawValue == version.form && check.matchedVersion == store)
                    #expect(check.descriptionStyle?.rawValue == (version.form == "md5" ? version.label.split(separator: " ")[1] : nil).map(String.init))
                }
            }
        }
    }

    @Test("without the store, or with only an xcdatamodel, property-list and md5 versions are not checked; verify reports 204 with its form")
    func checkedOnlyWithEntityHashes() throws {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let unknown = try Self.modelVersions("kik.sqlite", "unknown")
        for version in unknown {
            let cloud = try Self.folder(modelVersion: version.value, in: scratch.appendingPathComponent(version.label))
            #expect(try Run("merge", cloud.path).status == 0)
            #expect(try Run("merge", "--model", "Fixtures/models/Single.xcdatamodeld", cloud.path).status == 0)
            let verify = try Run("verify", "--json", "--store-metadata", Self.storePath("kik.sqlite"), cloud.path)
            #expect(verify.status == 1)
            let diagnostic = try JSONParser.parse(Array(verify.stdout.utf8))[JSONPointer(["ensembles", "0", "diagnostics", "0"])]
            #expect(diagnostic?[JSONPointer(["code"])] == .string("verify.unknown-model-version"))
            #expect(diagnostic?[JSONPointer(["details", "form"])] == .string(version.form))
        }
        // Two stores: a version known to either passes.
        let known = try Self.modelVersions("netusage.sqlite", "known")[1]
        let cloud = try Self.folder(modelVersion: known.value, in: scratch.appendingPathComponent("two"))
        let run = try Run("merge", "--store-metadata", Self.storePath("kik.sqlite"), "--store-metadata", Self.storePath("netusage.sqlite"), cloud.path)
        #expect(run.status == 0, "\(run.stderr)")
    }

    @Test("the library: Ensemble.Options.addModelVersion(fromCoreDataStore:) gives the same 204")
    func library() throws {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let unknown = try Self.modelVersions("Accounts3.sqlite", "unknown")[2]
        let cloud = try Self.folder(modelVersion: unknown.value, in: scratch)
        var options = Ensemble.Options()
        try options.addModelVersion(fromCoreDataStore: Run.packageRoot.appendingPathComponent(Self.storePath("Accounts3.sqlite")).path)
        let ensemble = Ensemble(inputs: [cloud.path], options: options)
        do {
            _ = try ensemble.merge()
            Issue.record("an unknown md5 model version merged")
        } catch {
            #expect(error.problems.map(\.number) == [204])
            #expect(error.problems.first?.details["form"] == .string("md5"))
        }
        #expect(throws: Never.self) { try Ensemble(inputs: [cloud.path]).merge() }
    }
}
