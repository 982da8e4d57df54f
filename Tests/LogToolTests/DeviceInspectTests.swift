import CSQLite
import DeviceState
import EnsemblesToolkit
import Foundation
import JSONDocument
import SchemaValidation
import Testing

/// `logtool inspect DEVICE-DIR` on the kit's device folders (Fixtures/device, written with their
/// expected documents by scripts/make-device-fixtures.py, never by the toolkit): Spec/device-state.md 5 and 6.
@Suite("inspect of a device's event-data folder")
struct DeviceInspectTests {
    static let root = Run.packageRoot.appendingPathComponent("Fixtures/device")
    static let cases = ((try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []).filter { !$0.hasSuffix(".md") }.sorted()

    static func json(_ url: URL) throws -> JSONValue { try JSONParser.parse(Array(try Data(contentsOf: url))) }

    /// The arguments a case asks for: its event-data root, its cloud folder, its backend token.
    static func arguments(_ name: String) throws -> [String] {
        let folder = root.appendingPathComponent(name)
        let description = try json(folder.appendingPathComponent("case.json"))
        var arguments = ["inspect", "--json", folder.appendingPathComponent("eventdata").path]
        if let cloud = description[JSONPointer(["cloud"])]?.stringValue { arguments += ["--cloud", folder.appendingPathComponent(cloud).path] }
        if let token = description[JSONPointer(["backendIdentityNow"])]?.stringValue { arguments += ["--backend-identity", token] }
        return arguments
    }

    /// The first difference between two facts documents, or nil: members in any order, arrays in
    /// order, numbers as numbers, `timestamp` text as the number it writes (Spec/device-state.md 5.4).
    static func difference(_ a: JSONValue, _ b: JSONValue, key: String = "", at path: String = "") -> String? {
        switch (a, b) {
        case (.object(let x), .object(let y)):
            guard Set(x.keys) == Set(y.keys) else { return "\(path): members \(x.keys.sorted()) against \(y.keys.sorted())" }
            for name in x.keys {
                if let found = difference(x[name] ?? .null, y[name] ?? .null, key: name, at: path + "/" + name) { return found }
            }
            return nil
        case (.array(let x), .array(let y)):
            guard x.count == y.count else { return "\(path): \(x.count) elements against \(y.count)" }
            for (index, pair) in zip(x, y).enumerated() {
                if let found = difference(pair.0, pair.1, at: path + "/\(index)") { return found }
            }
            return nil
        case (.number(let x), .number(let y)):
            return x.doubleValue == y.doubleValue ? nil : "\(path): \(x) against \(y)"
        case (.string(let x), .string(let y)) where key == "timestamp":
            return Double(x) != nil && Double(x) == Double(y) ? nil : "\(path): \(x) against \(y)"
        default:
            return a == b ? nil : "\(path): \(JSONWriter().string(a)) against \(JSONWriter().string(b))"
        }
    }

    @Test("every case inspects to its expected document, valid against the schema, and its folder is unchanged", arguments: cases)
    func expectedFacts(name: String) throws {
        let folder = Self.root.appendingPathComponent(name)
        let before = RepairTests.snapshot(folder)
        let run = try Run(try Self.arguments(name))
        #expect(run.status == 0, "\(run.stderr)")
        let document = try JSONParser.parse(Array(run.stdout.utf8))
        let expected = try Self.json(folder.appendingPathComponent("expected/device-state.json"))
        let found = Self.difference(document, expected)
        #expect(found == nil, "\(name): \(found ?? "")")
        #expect(try BundledSchema.deviceState.validator().validate(document).isEmpty)
        #expect(RepairTests.snapshot(folder) == before, "\(name): the device folder changed")
    }

    @Test("the comparison sees a change of event order, of a mandatory flag and of a timestamp")
    func comparisonIsStrict() throws {
        let expected = try Self.json(Self.root.appendingPathComponent("deleech-203/expected/device-state.json"))
        guard case .object(var document) = expected, case .array(var events)? = document["events"], case .array(var incomplete)? = document["incompleteEvents"],
            case .object(var first)? = incomplete.first, case .object(var event)? = events.first
        else {
            Issue.record("unexpected shape")
            return
        }
        #expect(Self.difference(expected, expected) == nil)
        var changed = document
        changed["events"] = .array([events[1], events[0]] + events.dropFirst(2))
        #expect(Self.difference(.object(changed), expected) != nil)
        first["mandatory"] = .bool(false)
        incomplete[0] = .object(first)
        changed = document
        changed["incompleteEvents"] = .array(incomplete)
        #expect(Self.difference(.object(changed), expected) != nil)
        event["timestamp"] = .string("1.5")
        events[0] = .object(event)
        document["events"] = .array(events)
        #expect(Self.difference(.object(document), expected) != nil)
    }

    @Test("the ensemble folder itself reads as the event-data root does; without a cloud, cloud is null and 205 is not evaluated")
    func ensembleFolderWithoutCloud() throws {
        let folder = Self.root.appendingPathComponent("deleech-205/eventdata/MainStore")
        let run = try Run("inspect", "--json", folder.path)
        #expect(run.status == 0, "\(run.stderr)")
        let document = try JSONParser.parse(Array(run.stdout.utf8))
        #expect(document[JSONPointer(["cloud"])] == .null)
        #expect(document[JSONPointer(["forcedDeleech"])] == .array([]))
        #expect(document[JSONPointer(["ensemble"])] == .string("MainStore"))
        #expect(try BundledSchema.deviceState.validator().validate(document).isEmpty)
        // The library call gives the same document.
        #expect(try Ensemble.inspectDevice(at: folder.path) == document)
    }

    @Test("the text names the store, marks the mandatory incomplete event and gives each forced-deleech condition with its evidence")
    func text() throws {
        let run = try Run(Array(try Self.arguments("deleech-203").filter { $0 != "--json" }))
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.hasPrefix("Device state of ensemble MainStore"))
        #expect(run.stdout.contains("BE52E89D-EB99-5B20-8859-63EC8FDFEE25  MANDATORY"))
        #expect(run.stdout.contains("203 mandatory incomplete event: mandatoryIncompleteEvents"))
        let uploaded = try Run(Array(try Self.arguments("never-uploaded").filter { $0 != "--json" }))
        #expect(uploaded.stdout.contains("never uploaded: events/3_26B8B821"))
        #expect(uploaded.stdout.contains("upload 4AC4CFFD3134E05776F89815F2A7E1A8"))
        #expect(uploaded.stdout.contains("next merge: imports 0 file(s) and integrates the new events; 2 event(s) and 1 data file(s) of its own wait"))
        #expect(run.stdout.contains("next merge: the device deleeches first"))
        let replaced = try Run(Array(try Self.arguments("baseline-replaced").filter { $0 != "--json" }))
        #expect(replaced.stdout.contains("baselines other than the store's: baselines/3_22A4F673"))
        #expect(replaced.stdout.contains("next merge: imports 1 file(s) and integrates in full (a new baseline)"))
        let differs = try Run(Array(try Self.arguments("revision-differs").filter { $0 != "--json" }))
        #expect(differs.stdout.contains("revisions with other contents in the cloud: events/2_26B8B821"))
    }

    @Test("the embedded event-store models are the model files of Fixtures/external byte for byte")
    func embeddedModels() throws {
        let models = Run.packageRoot.appendingPathComponent("Fixtures/external/ensembles-1x/models/CDEEventStoreModel.xcdatamodeld")
        for (name, xml) in EventStoreModelSource.versions {
            let file = try String(contentsOf: models.appendingPathComponent("\(name).xcdatamodel/contents"), encoding: .utf8)
            #expect(xml == file, "\(name)")
        }
    }

    /// The healthy case's event-data root with events 2 (revision 0) and 3 (revision 1) at one
    /// global count, event 2's store renamed "café" in NFC (bytes 63 61 66 C3 A9) and event 3's
    /// in NFD (63 61 66 65 CC 81): two stores that Swift's `==` calls one.
    static func normalisationPair() throws -> (scratch: URL, device: URL) {
        let (scratch, device) = try copyOfHealthy()
        var handle: OpaquePointer?
        try #require(sqlite3_open(device.appendingPathComponent("MainStore/events.sqlite").path, &handle) == SQLITE_OK)
        let sql = """
            UPDATE ZCDESTOREMODIFICATIONEVENT SET ZGLOBALCOUNT = 1 WHERE Z_PK IN (2, 3);
            UPDATE ZCDEEVENTREVISION SET ZPERSISTENTSTOREIDENTIFIER = 'caf' || char(233) WHERE Z_PK IN (2, 5);
            UPDATE ZCDEEVENTREVISION SET ZPERSISTENTSTOREIDENTIFIER = 'cafe' || char(769) WHERE Z_PK = 4;
            """
        try #require(sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK)
        try #require(sqlite3_close(handle) == SQLITE_OK)
        return (scratch, device)
    }

    @Test("events of one global count are ordered by their stores' identifiers as bytes, also when the two are NFC and NFD spellings")
    func storeOrderByBytes() throws {
        let (scratch, device) = try Self.normalisationPair()
        defer { try? FileManager.default.removeItem(at: scratch) }
        // The NFD store comes first although event 2's revision is lower.
        let run = try Run("inspect", "--json", device.appendingPathComponent("MainStore").path)
        let events = try JSONParser.parse(Array(run.stdout.utf8))[JSONPointer(["events"])]?.arrayValue ?? []
        let stores = events.compactMap { $0[JSONPointer(["storeIdentifier"])]?.stringValue.map { Array($0.utf8) } }
        let nfd = Array("cafe\u{301}".utf8), nfc = Array("caf\u{E9}".utf8)
        #expect(stores.dropFirst() == [nfd, nfc], "\(run.stdout)")
        // Two stores, not one: in the summary and in the NFD event's revisions (its own 1, the other's 0).
        let document = try JSONParser.parse(Array(run.stdout.utf8))
        let summary = document[JSONPointer(["stores"])]?.objectValue?.members ?? []
        #expect(summary.map { Array($0.key.utf8) } == [nfd, nfc], "\(run.stdout)")
        let revisions = events.dropFirst().first?[JSONPointer(["revisionsByStoreIdentifier"])]?.objectValue?.members ?? []
        #expect(revisions.map { Array($0.key.utf8) } == [nfd, nfc] && revisions.map(\.value) == [JSONValue(Int64(1)), JSONValue(Int64(0))], "\(run.stdout)")
    }

    @Test("a cloud event of the NFD store is not compared with the device's event of the NFC store at the same revision")
    func differingRevisionsByBytes() throws {
        let (scratch, device) = try Self.normalisationPair()
        defer { try? FileManager.default.removeItem(at: scratch) }
        // The cloud holds the NFD store's revision 0 (the device has only its revision 1) with
        // the content of the device's NFC revision 0 but for the store.
        let cloud = scratch.appendingPathComponent("cloud")
        try FileManager.default.copyItem(at: Self.root.appendingPathComponent("healthy/cloud"), to: cloud)
        let events = cloud.appendingPathComponent("MainStore/events")
        let source = events.appendingPathComponent("1_1BB7DB8C-37D6-5B04-92A0-4EBDA36C3BB6-1717-00000F6E5D4C3B2A_0.cdeevent")
        let text = try String(decoding: Data(contentsOf: source), as: UTF8.self)
        try FileManager.default.removeItem(at: source)
        try Data(text.replacingOccurrences(of: "1BB7DB8C-37D6-5B04-92A0-4EBDA36C3BB6-1717-00000F6E5D4C3B2A", with: "cafe\u{301}").utf8)
            .write(to: events.appendingPathComponent("1_cafe\u{301}_0.cdeevent"))
        let run = try Run("inspect", "--json", device.appendingPathComponent("MainStore").path, "--cloud", cloud.path)
        let document = try JSONParser.parse(Array(run.stdout.utf8))
        #expect(document[JSONPointer(["cloud", "differingRevisions"])] == .array([]), "\(run.stdout)")
    }

    @Test("a device's convert registers both the NFC and the NFD store", ByteOrderTests.bothNames)
    func convertRegistersBoth() throws {
        let (scratch, device) = try Self.normalisationPair()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let out = scratch.appendingPathComponent("out")
        let run = try Run("convert", "-q", device.appendingPathComponent("MainStore").path, out.path)
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        let stores = try FileManager.default.contentsOfDirectory(atPath: out.appendingPathComponent("MainStore/stores").path)
        #expect(Set(stores.map { ExactString($0) }).isSuperset(of: [ExactString("cafe\u{301}"), ExactString("caf\u{E9}")]), "\(stores)")
    }

    @Test("a device's data file named in NFD is not in a cloud that holds the name in NFC")
    func dataFilesNotInCloudByBytes() throws {
        let (scratch, device) = try Self.copyOfHealthy()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let cloud = scratch.appendingPathComponent("cloud")
        try FileManager.default.copyItem(at: Self.root.appendingPathComponent("healthy/cloud"), to: cloud)
        try Data("d".utf8).write(to: device.appendingPathComponent("MainStore/data/cafe\u{301}"))
        try Data("d".utf8).write(to: cloud.appendingPathComponent("MainStore/data/caf\u{E9}"))
        let run = try Run("inspect", "--json", device.appendingPathComponent("MainStore").path, "--cloud", cloud.path)
        let missing = try JSONParser.parse(Array(run.stdout.utf8))[JSONPointer(["cloud", "dataFilesNotInCloud"])]?.arrayValue ?? []
        #expect(missing.compactMap { $0.stringValue.map { Array($0.utf8) } } == [Array("cafe\u{301}".utf8)], "\(run.stdout)")
    }

    /// A copy of the healthy case's event-data root in a scratch folder.
    static func copyOfHealthy() throws -> (scratch: URL, device: URL) {
        let scratch = try scratchDirectory()
        let device = scratch.appendingPathComponent("eventdata")
        try FileManager.default.copyItem(at: root.appendingPathComponent("healthy/eventdata"), to: device)
        return (scratch, device)
    }

    /// Runs inspect on `path` and expects one error with `code` naming `file`, the exit status
    /// `status`, and nothing written in `folder`.
    static func expectOneError(
        _ path: String, code: String, file: String, status: Int32, folder: URL, arguments: [String] = [], message: String? = nil
    ) throws {
        let before = RepairTests.snapshot(folder)
        let run = try Run(["inspect", "--json", path] + arguments)
        #expect(run.status == status, "\(code): \(run.stdout) \(run.stderr)")
        let errors = try JSONParser.parse(Array(run.stdout.utf8))[JSONPointer(["errors"])]?.arrayValue ?? []
        #expect(errors.count == 1, "\(code): \(run.stdout)")
        #expect(errors.first?[JSONPointer(["code"])] == .string(code), "\(run.stdout)")
        #expect(errors.first?[JSONPointer(["files", "0"])]?.stringValue?.hasSuffix(file) == true, "\(run.stdout)")
        if let message { #expect(errors.first?[JSONPointer(["message"])]?.stringValue?.contains(message) == true, "\(run.stdout)") }
        #expect(RepairTests.snapshot(folder) == before, "\(code): files changed")
    }

    @Test("incomplete event identifiers that differ only in Unicode normalisation are two events (Spec/device-state.md 3.1, 5.3)")
    func twinIncompleteEvents() throws {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let (composed, decomposed) = ("caf\u{E9}", "cafe\u{301}")
        let plist = scratch.appendingPathComponent("store.plist")
        try Data(
            ("<?xml version=\"1.0\" encoding=\"UTF-8\"?><plist version=\"1.0\"><dict><key>persistentStoreIdentifier</key><string>S</string>"
                + "<key>incompleteEventIdentifiers</key><dict><key>\(composed)</key><true/><key>\(decomposed)</key><false/></dict></dict></plist>").utf8
        ).write(to: plist)
        let info = try DeviceStoreInfo.read(path: plist.path)
        #expect(info.incompleteEvents.count == 2)
        #expect(info.incompleteEvents[composed] == true && info.incompleteEvents[decomposed] == false)
    }

    @Test("bad input: one diagnostic with the file and its code, no crash, nothing written")
    func badInput() throws {
        let (scratch, device) = try Self.copyOfHealthy()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let ensemble = device.appendingPathComponent("MainStore")
        // Not a device folder: an empty folder with --cloud, a cloud folder with --backend-identity.
        let empty = scratch.appendingPathComponent("empty")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        try Self.expectOneError(empty.path, code: "eventdata.not-device-folder", file: "empty", status: 2, folder: scratch, arguments: ["--cloud", empty.path])
        let cloud = Self.root.appendingPathComponent("healthy/cloud").path
        try Self.expectOneError(
            cloud, code: "eventdata.not-device-folder", file: "cloud", status: 2, folder: Self.root, arguments: ["--backend-identity", "x"])
        // A store that is not Core Data's: an SQLite database without Z_METADATA.
        let store = ensemble.appendingPathComponent("events.sqlite")
        let original = try Data(contentsOf: store)
        try FileManager.default.removeItem(at: store)
        try Data("SQLite format 3\u{0}".utf8 + [UInt8](repeating: 0, count: 84)).write(to: store)
        try Self.expectOneError(device.path, code: "coredata.unreadable-store", file: "events.sqlite", status: 1, folder: scratch)
        // Missing events.sqlite (store.plist still there).
        try FileManager.default.removeItem(at: store)
        try Self.expectOneError(device.path, code: "coredata.unreadable-store", file: "events.sqlite", status: 1, folder: scratch)
        // A symbolic link to a good store is refused, not followed.
        let elsewhere = scratch.appendingPathComponent("elsewhere.sqlite")
        try original.write(to: elsewhere)
        try FileManager.default.createSymbolicLink(atPath: store.path, withDestinationPath: elsewhere.path)
        try Self.expectOneError(ensemble.path, code: "coredata.unreadable-store", file: "events.sqlite", status: 1, folder: scratch)
        // No store.plist: not leeched.
        try FileManager.default.removeItem(at: store)
        try original.write(to: store)
        let info = ensemble.appendingPathComponent("store.plist")
        try FileManager.default.removeItem(at: info)
        try Self.expectOneError(device.path, code: "eventdata.invalid-store-info", file: "store.plist", status: 1, folder: scratch)
        // One far larger than any the original writes is refused from its size, never loaded.
        #expect(FileManager.default.createFile(atPath: info.path, contents: nil))
        let handle = try FileHandle(forWritingTo: info)
        try handle.truncate(atOffset: 64 << 20)
        try handle.close()
        try Self.expectOneError(
            device.path, code: "eventdata.invalid-store-info", file: "store.plist", status: 1, folder: scratch,
            message: "larger than the limit of 16777216 bytes")
    }
}

/// `logtool convert DEVICE-DIR OUT` (Spec/device-state.md 7), checked against what the generator
/// wrote independently: the healthy case's cloud folder and every case's expected events.
@Suite("convert of a device's event-data folder")
struct DeviceConvertTests {
    @Test("healthy: merge of the converted folder prints the bytes merge of the case's cloud folder prints")
    func mergeEqualsCloud() throws {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let device = DeviceInspectTests.root.appendingPathComponent("healthy/eventdata")
        let before = RepairTests.snapshot(device)
        let out = scratch.appendingPathComponent("out")
        let run = try Run("convert", device.path, out.path)
        #expect(run.status == 0, "\(run.stdout) \(run.stderr)")
        #expect(RepairTests.snapshot(device) == before)
        let converted = try Run("merge", out.path)
        let cloud = try Run("merge", DeviceInspectTests.root.appendingPathComponent("healthy/cloud").path)
        #expect(cloud.status == 0 && !cloud.stdout.isEmpty, "\(cloud.stderr)")
        #expect(converted.status == cloud.status, "\(converted.stderr)")
        #expect(converted.stdout == cloud.stdout)
        // The converted folder verifies, and holds the device's registration and data file.
        #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent("MainStore/data/049C15E7DA7ED1A44D545D7E86986535").path))
        #expect(try Run("verify", out.path).status == 0)
    }

    @Test("every case's complete events convert to the generator's expected events; incomplete ones are left out", arguments: DeviceInspectTests.cases)
    func convertedEvents(name: String) throws {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let folder = DeviceInspectTests.root.appendingPathComponent(name)
        let expected = try DeviceInspectTests.json(folder.appendingPathComponent("expected/device-state.json"))
        let out = scratch.appendingPathComponent("out")
        let run = try Run("convert", "--json", folder.appendingPathComponent("eventdata").path, out.path)
        if name == "damaged-archive" {
            // A damaged archive cannot be converted without losing its changes: refused, nothing written.
            #expect(run.status == 1)
            #expect(run.stdout.contains("convert.unconvertible"), "\(run.stdout)")
            #expect(!FileManager.default.fileExists(atPath: out.path))
            return
        }
        #expect(run.status == 0, "\(run.stdout) \(run.stderr)")
        let ensemble = out.appendingPathComponent("MainStore")
        var written = 0
        for event in expected[JSONPointer(["events"])]?.arrayValue ?? [] {
            let type = event[JSONPointer(["type"])]?.numberValue?.int64Value ?? -1
            let identifier = event[JSONPointer(["uniqueIdentifier"])]?.stringValue ?? ""
            let count = event[JSONPointer(["globalCount"])]?.numberValue?.int64Value ?? -1
            let store = event[JSONPointer(["storeIdentifier"])]?.stringValue ?? ""
            let revision = event[JSONPointer(["revision"])]?.numberValue?.int64Value ?? -1
            let file = type == 100 ? "baselines/\(count)_\(identifier)_\(store.prefix(8)).cdeevent" : "events/\(count)_\(store)_\(revision).cdeevent"
            let url = ensemble.appendingPathComponent(file)
            guard type != 0 else {
                let writtenThere = FileManager.default.fileExists(atPath: url.path) ? try DeviceInspectTests.json(url)[JSONPointer(["uniqueIdentifier"])] : nil
                #expect(writtenThere != .string(identifier))
                #expect(run.stdout.contains("incomplete event \(identifier)"), "\(run.stdout)")
                continue
            }
            written += 1
            let converted = try DeviceInspectTests.json(url)
            for key in ["uniqueIdentifier", "type", "globalCount", "storeIdentifier", "revisionsByStoreIdentifier", "timestamp"] {
                let found = DeviceInspectTests.difference(converted[JSONPointer([key])] ?? .null, event[JSONPointer([key])] ?? .null, key: key)
                #expect(found == nil, "\(name) \(file) \(key): \(found ?? "")")
            }
            let changes = converted[JSONPointer(["changesByEntity"])] ?? .object(JSONObject())
            let found = DeviceInspectTests.difference(changes, event[JSONPointer(["changesByEntity"])] ?? .null)
            #expect(found == nil, "\(name) \(file): \(found ?? "")")
        }
        let files =
            DeviceFolder.fileNames(in: ensemble.appendingPathComponent("events").path)
            + DeviceFolder.fileNames(in: ensemble.appendingPathComponent("baselines").path)
        #expect(files.count == written)
    }

    @Test("the destination is never replaced, and a device convert takes no wrapping options")
    func destinationExists() throws {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let device = DeviceInspectTests.root.appendingPathComponent("healthy/eventdata").path
        let out = scratch.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        let run = try Run("convert", "--json", device, out.path)
        #expect(run.status == 2 && run.stdout.contains("convert.destination-exists"), "\(run.stdout) \(run.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).isEmpty)
        #expect(try Run("convert", "--zip", device, scratch.appendingPathComponent("zipped").path).status == 2)
    }
}

/// `logtool verify --device DEVICE-DIR CLOUD` (Spec/diagnostics.md 4.17d): the findings expected
/// here are derived from the generator's expected documents (their `cloud` and `forcedDeleech`).
@Suite("verify --device")
struct DeviceVerifyTests {
    @Test("each case's device findings are those its expected facts give, with their files and evidence", arguments: DeviceInspectTests.cases)
    func findings(name: String) throws {
        let folder = DeviceInspectTests.root.appendingPathComponent(name)
        let expected = try DeviceInspectTests.json(folder.appendingPathComponent("expected/device-state.json"))
        let description = try DeviceInspectTests.json(folder.appendingPathComponent("case.json"))
        var arguments = ["verify", "--json", "--device", folder.appendingPathComponent("eventdata/MainStore").path]
        if let token = description[JSONPointer(["backendIdentityNow"])]?.stringValue { arguments += ["--backend-identity", token] }
        let run = try Run(arguments + [folder.appendingPathComponent("cloud").path])
        let document = try JSONParser.parse(Array(run.stdout.utf8))
        let diagnostics = (document[JSONPointer(["ensembles", "0", "diagnostics"])]?.arrayValue ?? []).filter {
            $0[JSONPointer(["code"])]?.stringValue?.hasPrefix("verify.device-") == true && $0[JSONPointer(["code"])] != .string("verify.device-stop")
        }
        func line(_ code: String, _ number: JSONValue, _ files: [JSONValue], _ details: JSONValue) -> String {
            JSONWriter().string(.object(JSONObject([("code", .string(code)), ("number", number), ("files", .array(files)), ("details", details)])))
        }
        var wanted: [String] = []
        for event in expected[JSONPointer(["cloud", "neverUploaded"])]?.arrayValue ?? [] {
            let details = JSONValue.object(
                JSONObject([
                    ("uniqueIdentifier", event[JSONPointer(["uniqueIdentifier"])] ?? .null), ("inUploadCache", event[JSONPointer(["inUploadCache"])] ?? .null),
                ]))
            wanted.append(line("verify.device-not-uploaded", .null, [event[JSONPointer(["file"])] ?? .null], details))
        }
        for event in expected[JSONPointer(["cloud", "notImported"])]?.arrayValue ?? [] {
            let details = JSONValue.object(
                JSONObject([
                    ("uniqueIdentifier", event[JSONPointer(["uniqueIdentifier"])] ?? .null),
                    ("inDownloadCache", event[JSONPointer(["inDownloadCache"])] ?? .null),
                ]))
            wanted.append(line("verify.device-not-imported", .null, [event[JSONPointer(["file"])] ?? .null], details))
        }
        let builtFrom = expected[JSONPointer(["baselineUsedToConstructStore"])] ?? .null
        for baseline in expected[JSONPointer(["cloud", "otherBaselines"])]?.arrayValue ?? [] {
            let details = JSONValue.object(JSONObject([("uniqueIdentifier", baseline[JSONPointer(["uniqueIdentifier"])] ?? .null), ("builtFrom", builtFrom)]))
            wanted.append(line("verify.device-other-baseline", .null, [baseline[JSONPointer(["file"])] ?? .null], details))
        }
        for revision in expected[JSONPointer(["cloud", "differingRevisions"])]?.arrayValue ?? [] {
            let details = JSONValue.object(
                JSONObject(
                    ["storeIdentifier", "revision", "uniqueIdentifier", "cloudUniqueIdentifier", "sameName"].map { ($0, revision[JSONPointer([$0])] ?? .null) })
            )
            wanted.append(line("verify.device-revision-differs", .null, [revision[JSONPointer(["file"])] ?? .null], details))
        }
        for condition in expected[JSONPointer(["forcedDeleech"])]?.arrayValue ?? [] {
            let evidence = condition[JSONPointer(["evidence"])]?.objectValue ?? JSONObject()
            let details = JSONValue.object(JSONObject([("reason", condition[JSONPointer(["reason"])] ?? .null)] + evidence.members.map { ($0.key, $0.value) }))
            let files = condition[JSONPointer(["code"])] == JSONValue(Int64(205)) ? [evidence["registrationFile"] ?? .null] : []
            wanted.append(line("verify.device-deleech", condition[JSONPointer(["code"])] ?? .null, files, details))
        }
        let found = diagnostics.map {
            line(
                $0[JSONPointer(["code"])]?.stringValue ?? "", $0[JSONPointer(["number"])] ?? .null, $0[JSONPointer(["files"])]?.arrayValue ?? [],
                $0[JSONPointer(["details"])] ?? .null)
        }
        #expect(found.sorted() == wanted.sorted(), "\(name): \(run.stderr)")
        // Errors (a deleech condition, or the cloud's own) make the exit status 1.
        let errors = document[JSONPointer(["summary", "errors"])]?.numberValue?.int64Value ?? -1
        #expect(run.status == (errors > 0 ? 1 : 0))
    }
}
