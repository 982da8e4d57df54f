import Foundation
import Testing
import JSONDocument
@testable import EnsemblesToolkit
@testable import LogToolCore

/// `logtool timeline` as a file (Spec/timeline.md); what a browser shows is checked by
/// scripts/timeline-browser-test.py in a real headless chromium.
@Suite("Timeline page")
struct TimelineTests {
    @Test("one self-contained page: nothing fetched, every finding of verify drawn with its code, names escaped")
    func selfContained() throws {
        let run = try Run("timeline", "Fixtures/folders/damaged/cloud")
        #expect(run.status == 0, "\(run.stderr)")
        let page = run.stdout
        for reference in ["<script src", "<link", "<img", "url(http", "@import", "<iframe"] { #expect(!page.contains(reference), "\(reference)") }
        let verify = try JSONParser.parse(Array(try Run("verify", "--json", "Fixtures/folders/damaged/cloud").stdout.utf8))
        let diagnostics = verify[JSONPointer(["ensembles", "0", "diagnostics"])]?.arrayValue ?? []
        #expect(diagnostics.count == 7)
        for (index, diagnostic) in diagnostics.enumerated() {
            let code = diagnostic[JSONPointer(["code"])]?.stringValue ?? "?"
            #expect(page.contains("data-index=\"\(index)\" data-code=\"\(code)\""), "finding \(index) \(code)")
        }
        #expect(page.contains("F9A0B1C2-STORE-FOXT (unregistered)") || page.contains("(unregistered)"))
        // No array is spread into a call (its elements go on the stack: 125,000 marks in
        // Math.min.apply stopped the script at load; Spec/timeline.md 2). The browser test shows
        // it only above 100,000 events, more than it draws by default.
        let script = try #require(page.components(separatedBy: "<script>").last)
        for spread in [".apply(", "...", "Reflect.apply"] { #expect(!script.contains(spread), "\(spread)") }
    }

    @Test("--json: the lanes, marks and findings the page draws, the findings exactly verify's")
    func json() throws {
        let run = try Run("timeline", "--json", "Fixtures/verify/revision-gap/cloud")
        #expect(run.status == 0 && run.stderr == "", "\(run.stderr)")
        let document = try JSONParser.parse(Array(run.stdout.utf8))
        #expect(document[JSONPointer(["timelineVersion"])] == JSONValue(Int64(2)) && document[JSONPointer(["kind"])] == .string("timeline"))
        // The case's hand-derived verify document (Fixtures/verify/README.md); reason and
        // consequence are informative, so they are left out of the comparison.
        let expected = try JSONParser.parse(
            Array(try Data(contentsOf: Run.packageRoot.appendingPathComponent("Fixtures/verify/revision-gap/expected/verify.json"))))
        func normative(_ findings: JSONValue?) -> [JSONValue] {
            (findings?.arrayValue ?? []).map { finding in
                .object(JSONObject((finding.objectValue ?? JSONObject()).filter { $0.key != "reason" && $0.key != "consequence" }.map { ($0.key, $0.value) }))
            }
        }
        let ensemble = document[JSONPointer(["ensembles", "0"])]
        #expect(normative(ensemble?[JSONPointer(["findings"])]) == normative(expected[JSONPointer(["ensembles", "0", "diagnostics"])]))
        #expect(ensemble?[JSONPointer(["growth"])] == expected[JSONPointer(["ensembles", "0", "growth"])])
        // Three events of ALPHA-STORE, revisions 0, 1 and 4 (the names in the case's cloud folder).
        let marks = ensemble?[JSONPointer(["marks"])]?.arrayValue ?? []
        #expect(marks.map { $0[JSONPointer(["revision"])] } == [0, 1, 4].map { JSONValue(Int64($0)) })
        #expect(Set(marks.compactMap { $0[JSONPointer(["store"])]?.stringValue }) == ["ALPHA-STORE"])
    }

    @Test("a store that only an unreadable event's name gives has a lane, unregistered, and no mark")
    func laneFromFileName() throws {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let cloud = scratch.appendingPathComponent("cloud")
        try FileManager.default.copyItem(at: Run.packageRoot.appendingPathComponent("Fixtures/verify/revision-gap/cloud"), to: cloud)
        try Data("not an event".utf8).write(to: cloud.appendingPathComponent("E/events/2_ZULU-STORE_0.cdeevent"))
        let run = try Run("timeline", "--json", cloud.path)
        #expect(run.status == 0, "\(run.stderr)")
        let ensemble = try JSONParser.parse(Array(run.stdout.utf8))[JSONPointer(["ensembles", "0"])]
        let lanes = (ensemble?[JSONPointer(["lanes"])]?.arrayValue ?? []).map {
            ($0[JSONPointer(["store"])]?.stringValue ?? "?", $0[JSONPointer(["registered"])] == .bool(true))
        }
        #expect(lanes.map(\.0) == ["ALPHA-STORE", "ZULU-STORE"] && lanes.map(\.1) == [true, false])
        let marks = ensemble?[JSONPointer(["marks"])]?.arrayValue ?? []
        #expect(Set(marks.compactMap { $0[JSONPointer(["store"])]?.stringValue }) == ["ALPHA-STORE"])
    }

    @Test("-o writes the page and refuses an existing file without --force")
    func output() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("timeline-\(UUID().uuidString).html")
        defer { try? FileManager.default.removeItem(at: file) }
        #expect(try Run("timeline", "Fixtures/folders/damaged/cloud", "-o", file.path).status == 0)
        #expect(try String(contentsOf: file, encoding: .utf8).hasPrefix("<!DOCTYPE html>"))
        #expect(try Run("timeline", "Fixtures/folders/damaged/cloud", "-o", file.path).status == 2)
        #expect(try Run("timeline", "Fixtures/folders/damaged/cloud", "-o", file.path, "--force").status == 0)
        #expect(try Run("timeline", "Fixtures/no-such-folder").status == 2)
    }

    @Test("with --as-store, the events the device holds back are findings on the page")
    func device() throws {
        let run = try Run(
            arguments: ["timeline", "--as-store", "STORE-AA", "cloud/E"], in: Run.packageRoot.appendingPathComponent("Fixtures/merge/device-held-back"))
        #expect(run.status == 0)
        #expect(run.stdout.components(separatedBy: "data-code=\"verify.held-back\"").count - 1 == 4)
    }

    @Test("with --device, the events only the device holds are marks of its lane, with its findings", arguments: ["never-uploaded", "healthy"])
    func deviceFolder(_ name: String) throws {
        // The generator's expected facts (Fixtures/device) name the events never uploaded.
        let folder = Run.packageRoot.appendingPathComponent("Fixtures/device/\(name)")
        let facts = try JSONParser.parse(Array(try Data(contentsOf: folder.appendingPathComponent("expected/device-state.json"))))
        let never = (facts[JSONPointer(["cloud", "neverUploaded"])]?.arrayValue ?? []).compactMap { $0[JSONPointer(["file"])]?.stringValue }
        let arguments = ["timeline", "--device", "eventdata/MainStore", "cloud"]
        let run = try Run(arguments: arguments + ["--json"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        let document = try JSONParser.parse(Array(run.stdout.utf8))
        let marks = document[JSONPointer(["ensembles", "0", "marks"])]?.arrayValue ?? []
        let onlyOnDevice = marks.filter { $0[JSONPointer(["onlyOnDevice"])] == .bool(true) }.compactMap { $0[JSONPointer(["file"])]?.stringValue }
        #expect(onlyOnDevice.sorted() == never.sorted())
        #expect(
            marks.count == onlyOnDevice.count
                + (try FileManager.default.subpathsOfDirectory(atPath: folder.appendingPathComponent("cloud/MainStore/events").path).count)
                + (try FileManager.default.subpathsOfDirectory(atPath: folder.appendingPathComponent("cloud/MainStore/baselines").path).count))
        let findings = document[JSONPointer(["ensembles", "0", "findings"])]?.arrayValue ?? []
        let notUploaded = findings.filter { $0[JSONPointer(["code"])] == .string("verify.device-not-uploaded") }.compactMap {
            $0[JSONPointer(["files", "0"])]?.stringValue
        }
        #expect(notUploaded.sorted() == never.sorted())
        let page = try Run(arguments: arguments, in: folder).stdout
        #expect(page.components(separatedBy: "data-kind=\"device-only\" data-i=").count - 1 == never.count)
        #expect(page.contains("<li data-kind=\"device-only\">"))
        #expect(never.isEmpty || page.contains("data-code=\"verify.device-not-uploaded\""))
    }
}

/// The data a timeline page embeds cannot change how the HTML parser reads the page
/// (Spec/timeline.md 2): `<!--<script>` in a name once hid every later ensemble.
@Suite("Timeline page: embedded data")
struct TimelineDataTests {
    @Test("no <, > or & in the embedded JSON, which still reads back to the folder's names")
    func embeddedJSON() throws {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        // No "/": the name is also a folder's and files' (so no `</script>` here; `<` is what matters).
        let name = "<!--<script>&amp;\u{2028}"
        let (root, _, _) = try TerminalOutputTests.folder(in: scratch, name: name)
        let run = LogTool.runCapturing(arguments: ["timeline", root.path])
        #expect(run.status == 0, "\(run.stderr)")
        let opening = #"<script type="application/json" class="timeline-data">"#
        let pieces = run.stdout.components(separatedBy: opening).dropFirst()
        #expect(pieces.count == 1)
        for piece in pieces {
            let json = try #require(piece.components(separatedBy: "</script>").first)
            for character in ["<", ">", "&", "\u{2028}"] { #expect(!json.contains(character), "\(character) in \(json.prefix(300))") }
            let data = try JSONParser.parse(Array(json.utf8))
            #expect(data[JSONPointer(["lanes"])] == .array([.string("S" + name)]))
            let files = try TimelineColumns.marks(data).map(\.file)
            #expect(files == ["events/1_S\(name)_0.cdeevent", "events/2_S\(name)_2.cdeevent"])
            let codes = (data[JSONPointer(["findings"])]?.arrayValue ?? []).compactMap { $0[JSONPointer(["0"])]?.stringValue }
            #expect(codes.contains("verify.revision-gap"))
        }
        // The page's own script element follows the data, whole.
        #expect(run.stdout.contains("document.documentElement.setAttribute('data-script','ready');"))
    }
}

/// Many stores (Spec/timeline.md 2): at most 50 lanes, the stores after the 49th in one.
@Suite("Timeline page: many stores")
struct TimelineLaneTests {
    @Test("55 stores give 49 lanes of their own and one lane of the other 6")
    func sharedLane() throws {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let ensemble = scratch.appendingPathComponent("cloud/E")
        for sub in ["stores", "events"] {
            try FileManager.default.createDirectory(at: ensemble.appendingPathComponent(sub), withIntermediateDirectories: true)
        }
        for index in 1...55 {
            let store = String(format: "STORE-%02d", index)
            try Data(
                #"<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict><key>storeIdentifier</key><string>\#(store)</string></dict></plist>"#.utf8
            )
            .write(to: ensemble.appendingPathComponent("stores/\(store)"))
            let event =
                #"{"changesByEntity":{},"globalCount":\#(index),"revisionsByStoreIdentifier":{"\#(store)":0},"storeIdentifier":"\#(store)","timestamp":"1.0","type":200,"uniqueIdentifier":"U\#(index)"}"#
            try Data(event.utf8).write(to: ensemble.appendingPathComponent("events/\(index)_\(store)_0.cdeevent"))
        }
        let run = LogTool.runCapturing(arguments: ["timeline", ensemble.path])
        #expect(run.status == 0, "\(run.stderr)")
        let page = run.stdout
        #expect(page.components(separatedBy: "<g class=\"lane").count - 1 == 50)
        #expect(page.components(separatedBy: "<g class=\"lane\" data-store=").count - 1 == 49)
        #expect(page.contains(#"<g class="lane more" data-more="6">"#))
        #expect(page.contains(">+6 more stores</text>"))
        #expect(page.contains(#"data-store="STORE-49""#) && !page.contains(#"<g class="lane" data-store="STORE-50""#))
        // Each registration above lacks what verify wants: 55 findings about the folder, one row
        // of squares (1100 / 16 = 68 fit in a row) from 8 to 24, so the lanes start at 8 + 16 + 8
        // = 32 and the drawing is 32 + 50 * 36 + 36 (the axis) high; every mark lies inside it,
        // the last ones on lane 50.
        #expect(page.components(separatedBy: "data-kind=\"folder\" data-index=").count - 1 == 55)
        #expect(page.contains(#"viewBox="0 0 1380 1868""#))
        let marks = page.components(separatedBy: "<circle class=\"mark type-").dropFirst().filter { $0.contains("data-i=") }
        let rows = marks.compactMap { $0.components(separatedBy: " cy=\"").dropFirst().first.flatMap { Double($0.prefix { $0 != "\"" }) } }
        #expect(rows.count == 55 && rows.allSatisfy { $0 <= 32 + 49 * 36 + 18 })
        #expect(rows.filter { $0 == 32 + 49 * 36 + 18 }.count == 6)
    }
}

/// The marks a page embeds, read back by a reader written from Spec/timeline.md 4 alone (not the
/// page's script), compared with what `--json` says of the same folder.
enum TimelineColumns {
    struct Mark: Equatable {
        var file: String, store: String, revision: Int64, globalCount: Int64, timestamp: Double
        var type: Int64, inserts: Int64, updates: Int64, deletes: Int64, modelVersion: String?, spans: [String], onlyOnDevice: Bool
    }

    struct Unreadable: Error { var what: String }

    /// A column's integers: a JSON array as it is, else `p` or `r` and base64 VLQ numbers.
    static func integers(_ column: JSONValue?, count: Int) throws -> (values: [Int64], packed: Bool) {
        if let array = column?.arrayValue { return (try array.map { try int($0) }, false) }
        guard let text = column?.stringValue, let tag = text.first, tag == "p" || tag == "r" else { throw Unreadable(what: "column") }
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
        let digits = try text.dropFirst().map { character in
            guard let digit = alphabet.firstIndex(of: character) else { throw Unreadable(what: "digit \(character)") }
            return Int64(digit)
        }
        var position = 0
        func number() throws -> Int64 {
            var digit: Int64 = 32, magnitude: Int64 = 0, shift: Int64 = -1, negative = false
            while digit & 32 != 0 {
                guard position < digits.count else { throw Unreadable(what: "a number cut short") }
                digit = digits[position]
                position += 1
                if shift < 0 {
                    // The first digit: the sign, then the four lowest bits.
                    negative = digit & 1 == 1
                    magnitude = (digit >> 1) & 15
                    shift = 4
                } else {
                    magnitude += (digit & 31) << shift
                    shift += 5
                }
            }
            return negative ? -magnitude : magnitude
        }
        var values: [Int64] = []
        while position < digits.count {
            let value = try number()
            let run = tag == "r" ? try number() : 1
            values += repeatElement(value, count: Int(run))
        }
        guard values.count == count else { throw Unreadable(what: "\(values.count) values for \(count) marks") }
        return (values, true)
    }

    static func int(_ value: JSONValue?) throws -> Int64 {
        guard let int = value?.numberValue?.int64Value else { throw Unreadable(what: "an integer") }
        return int
    }

    static func marks(_ data: JSONValue) throws -> [Mark] {
        let count = Int(try int(data[JSONPointer(["count"])]))
        let strings = (data[JSONPointer(["strings"])]?.arrayValue ?? []).compactMap(\.stringValue)
        func column(_ name: String) throws -> (values: [Int64], packed: Bool) { try integers(data[JSONPointer(["columns", name])], count: count) }
        func string(_ index: Int64) throws -> String {
            guard index >= 0 && index < strings.count else { throw Unreadable(what: "string \(index)") }
            return strings[Int(index)]
        }
        let storeIndices = try column("store").values
        let stores = try storeIndices.map(string)
        var (globalCounts, gcPacked) = try column("globalCount")
        if gcPacked { for index in globalCounts.indices.dropFirst() { globalCounts[index] &+= globalCounts[index - 1] } }
        var (revisions, revisionPacked) = try column("revision")
        if revisionPacked {
            // By the store's index in `strings`, as the page's script does.
            var last: [Int64: Int64] = [:]
            for index in revisions.indices {
                revisions[index] &+= last[storeIndices[index], default: 0]
                last[storeIndices[index]] = revisions[index]
            }
        }
        guard let unit = data[JSONPointer(["timeUnit"])]?.numberValue?.doubleValue else { throw Unreadable(what: "timeUnit") }
        var tick: Int64 = 0
        let (timeValues, timePacked) = try column("time")
        var times = timeValues.map { value in
            tick = timePacked ? tick &+ value : value
            return Double(tick) / unit
        }
        func pairs(_ name: String) -> [(Int, JSONValue)] {
            (data[JSONPointer([name])]?.arrayValue ?? []).compactMap { pair in
                pair[JSONPointer(["0"])]?.numberValue?.int64Value.flatMap { index in pair[JSONPointer(["1"])].map { (Int(index), $0) } }
            }
        }
        for (index, time) in pairs("times") where times.indices.contains(index) { times[index] = time.numberValue?.doubleValue ?? .nan }
        let files = Dictionary(pairs("files").map { ($0.0, $0.1.stringValue ?? "") }, uniquingKeysWith: { first, _ in first })
        let spans = Dictionary(pairs("spans").map { ($0.0, ($0.1.arrayValue ?? []).compactMap(\.stringValue)) }, uniquingKeysWith: { first, _ in first })
        let deviceOnly = Set((data[JSONPointer(["deviceOnly"])]?.arrayValue ?? []).compactMap { $0.numberValue?.int64Value.map(Int.init) })
        let (types, inserts, updates, deletes, models) = (
            try column("type").values, try column("inserts").values, try column("updates").values, try column("deletes").values,
            try column("modelVersion").values
        )
        let modelVersions = try models.map { $0 == 0 ? nil : try string($0 - 1) }
        return (0..<count).map { index in
            Mark(
                file: files[index] ?? "events/\(globalCounts[index])_\(stores[index])_\(revisions[index]).cdeevent", store: stores[index],
                revision: revisions[index], globalCount: globalCounts[index], timestamp: times[index], type: types[index], inserts: inserts[index],
                updates: updates[index], deletes: deletes[index], modelVersion: modelVersions[index],
                spans: spans[index] ?? [], onlyOnDevice: deviceOnly.contains(index))
        }
    }

    /// The marks of `--json` (Spec/timeline.md 6), the same fields.
    static func marks(json ensemble: JSONValue?) throws -> [Mark] {
        try (ensemble?[JSONPointer(["marks"])]?.arrayValue ?? []).map { mark in
            func text(_ name: String) -> String? { mark[JSONPointer([name])]?.stringValue }
            return Mark(
                file: text("file") ?? "", store: text("store") ?? "", revision: try int(mark[JSONPointer(["revision"])]),
                globalCount: try int(mark[JSONPointer(["globalCount"])]), timestamp: mark[JSONPointer(["timestamp"])]?.numberValue?.doubleValue ?? .nan,
                type: try int(mark[JSONPointer(["type"])]), inserts: try int(mark[JSONPointer(["inserts"])]),
                updates: try int(mark[JSONPointer(["updates"])]), deletes: try int(mark[JSONPointer(["deletes"])]), modelVersion: text("modelVersion"),
                spans: (mark[JSONPointer(["spans"])]?.arrayValue ?? []).compactMap(\.stringValue),
                onlyOnDevice: mark[JSONPointer(["onlyOnDevice"])] == .bool(true))
        }
    }

    /// Each ensemble's data element of a page.
    static func dataElements(_ page: String) throws -> [JSONValue] {
        try page.components(separatedBy: #"<script type="application/json" class="timeline-data">"#).dropFirst().map { piece in
            try JSONParser.parse(Array((piece.components(separatedBy: "</script>").first ?? "").utf8))
        }
    }
}

/// The page embeds each event once, in columns (Spec/timeline.md 4).
@Suite("Timeline page: columns")
struct TimelineColumnTests {
    @Test("base64 VLQ as source maps write it, runs when shorter")
    func vlq() {
        // Source map VLQ: 0 A, 1 C, -1 D, 15 e, 16 gB, -16 hB, 123 2H.
        #expect(TimelinePage.vlq([0, 1, -1, 15, 16, -16, 123]) == "pACDegBhB2H")
        // Four 5s: "pKKKK", or the run (5, 4): "rKI".
        #expect(TimelinePage.vlq([5, 5, 5, 5]) == "rKI")
        #expect(TimelinePage.vlq([]) == "p")
    }

    @Test(
        "the columns read back to the marks of --json",
        arguments: [
            ["Fixtures/folders/example/cloud"], ["Fixtures/folders/damaged/cloud"], ["--as-store", "STORE-AA", "Fixtures/merge/device-held-back/cloud/E"],
            ["--device", "Fixtures/device/never-uploaded/eventdata/MainStore", "Fixtures/device/never-uploaded/cloud"],
        ])
    func readBack(_ arguments: [String]) throws {
        let page = try Run(["timeline"] + arguments)
        let json = try Run(["timeline", "--json"] + arguments)
        #expect(page.status == 0 && json.status == 0, "\(page.stderr)")
        let document = try JSONParser.parse(Array(json.stdout.utf8))
        let elements = try TimelineColumns.dataElements(page.stdout)
        let ensembles = document[JSONPointer(["ensembles"])]?.arrayValue ?? []
        #expect(elements.count == ensembles.count && !elements.isEmpty)
        for (element, ensemble) in zip(elements, ensembles) {
            let expected = try TimelineColumns.marks(json: ensemble)
            #expect(!expected.isEmpty)
            #expect(try TimelineColumns.marks(element) == expected)
        }
    }

    @Test("times in milliseconds and beyond any unit, global counts beyond 2^52 read back exactly")
    func farValues() throws {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        var ensemble = scratch.appendingPathComponent("cloud/E")
        func write(_ store: String, _ events: [(count: String, revision: Int, time: String)]) throws {
            for sub in ["stores", "events"] {
                try FileManager.default.createDirectory(at: ensemble.appendingPathComponent(sub), withIntermediateDirectories: true)
            }
            try Data(
                #"<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict><key>storeIdentifier</key><string>\#(store)</string></dict></plist>"#.utf8
            ).write(to: ensemble.appendingPathComponent("stores/\(store)"))
            for event in events {
                let text =
                    #"{"changesByEntity":{},"globalCount":\#(event.count),"revisionsByStoreIdentifier":{"\#(store)":\#(event.revision)},"storeIdentifier":"\#(store)","timestamp":"\#(event.time)","type":200,"uniqueIdentifier":"U\#(store)\#(event.count)"}"#
                try Data(text.utf8).write(to: ensemble.appendingPathComponent("events/\(event.count)_\(store)_\(event.revision).cdeevent"))
            }
        }
        // Milliseconds (unit 1000), a time beyond 2^52 ms and one of 1e300 (listed apart).
        try write("A", [("1", 0, "800000000.125"), ("2", 1, "1e300"), ("3", 2, "-1e300"), ("4", 3, "1.5"), ("5", 4, "9e12")])
        let run = try Run("timeline", ensemble.path)
        let json = try Run("timeline", "--json", ensemble.path)
        let element = try #require(try TimelineColumns.dataElements(run.stdout).first)
        #expect(element[JSONPointer(["timeUnit"])]?.numberValue?.doubleValue == 1000)
        #expect(element[JSONPointer(["times"])]?.arrayValue?.count == 3)
        let document = try JSONParser.parse(Array(json.stdout.utf8))
        #expect(try TimelineColumns.marks(element) == TimelineColumns.marks(json: document[JSONPointer(["ensembles", "0"])]))
        // Global counts beyond 2^52: the column holds the values, every file is listed.
        try write("B", [("9007199254740993", 0, "2.0"), ("9007199254740995", 1, "3.0")])
        let far = try Run("timeline", ensemble.path)
        let farJSON = try JSONParser.parse(Array(try Run("timeline", "--json", ensemble.path).stdout.utf8))
        let farElement = try #require(try TimelineColumns.dataElements(far.stdout).first)
        #expect(farElement[JSONPointer(["columns", "globalCount"])]?.arrayValue != nil)
        #expect(farElement[JSONPointer(["files"])]?.arrayValue?.count == 7)
        #expect(try TimelineColumns.marks(farElement) == TimelineColumns.marks(json: farJSON[JSONPointer(["ensembles", "0"])]))
        // Whole seconds (unit 1) from -4e15 to 4e15: each within 2^52, their difference (8e15)
        // is not, and still a difference of the packed column.
        ensemble = scratch.appendingPathComponent("cloud/F")
        try write("C", [("1", 0, "-4000000000000000"), ("2", 1, "4000000000000000")])
        let wide = try #require(try TimelineColumns.dataElements(try Run("timeline", ensemble.path).stdout).first)
        let wideJSON = try JSONParser.parse(Array(try Run("timeline", "--json", ensemble.path).stdout.utf8))
        #expect(wide[JSONPointer(["timeUnit"])]?.numberValue?.doubleValue == 1 && wide[JSONPointer(["times"])]?.arrayValue?.isEmpty == true)
        #expect(try TimelineColumns.marks(wide) == TimelineColumns.marks(json: wideJSON[JSONPointer(["ensembles", "0"])]))
    }
}

/// Above 4,000 events the page draws bins, not a mark per event, and stays small (Spec/timeline.md 4).
@Suite("Timeline page: the threshold")
struct TimelineThresholdTests {
    /// `count` events of 10 stores, as `logtool generate` writes them with one change per event:
    /// a global count that mostly goes up by one, times 0 or 3 seconds apart, one insert,
    /// update or delete each.
    static func report(events count: Int) -> TimelineReport {
        let stores = (0..<10).map { "STORE-\($0)-0123456789ABCDEF" }
        var revisions = [Int64](repeating: 0, count: 10)
        let marks = (0..<count).map { index in
            let store = (index * 7 + index / 3) % 10
            defer { revisions[store] += 1 }
            let globalCount = Int64(index - index / 5)
            return TimelineReport.Mark(
                file: "events/\(globalCount)_\(stores[store])_\(revisions[store]).cdeevent", store: stores[store], revision: revisions[store],
                globalCount: globalCount, timestamp: 800_000_000 + Double(index * 2 + index % 3), type: 200, inserts: index % 3 == 0 ? 1 : 0,
                updates: index % 3 == 1 ? 1 : 0, deletes: index % 3 == 2 ? 1 : 0, modelVersion: "sha256:0123456789abcdef", spans: [])
        }
        return TimelineReport(
            identifier: "E", lanes: stores.map { TimelineReport.Lane(store: $0, registered: true) }, marks: marks, findings: [], growth: .object(JSONObject()))
    }

    @Test("4,000 events are drawn one by one, 4,001 as bins that count every event")
    func threshold() throws {
        let at = TimelinePage.html([Self.report(events: 4000)], source: "S", asStore: nil)
        // An event's mark names its index (`data-i`), a bin its count (the legend's have neither).
        #expect(at.components(separatedBy: " data-i=\"").count - 1 == 4000)
        #expect(!at.contains(" data-count=\""))
        let above = TimelinePage.html([Self.report(events: 4001)], source: "S", asStore: nil)
        #expect(!above.contains(" data-i=\""))
        let counts = above.components(separatedBy: "<rect class=\"bin\" data-kind=\"bin\" data-count=\"").dropFirst().compactMap {
            Int($0.prefix { $0 != "\"" })
        }
        #expect(!counts.isEmpty && counts.reduce(0, +) == 4001)
        // Still every event embedded, once: the columns read back to the 4,001 marks.
        let element = try #require(try TimelineColumns.dataElements(above).first)
        let marks = try TimelineColumns.marks(element)
        #expect(marks.count == 4001 && marks.last?.file == Self.report(events: 4001).marks.last?.file)
    }

    @Test("each event takes at most 7 bytes of the embedded data")
    func compact() throws {
        // By hand: per event one digit each for the global count's step (0 or 1), the store (0 to
        // 9), the time's step (3 or 0 s, unit 1 s) and the three counts (0 or 1): 6 digits; the
        // revision's step (0 for a store's first event, then 1), the type and the model version
        // are a few runs, and the lanes, the strings and the members' names some hundred bytes.
        let count = 20000
        let page = TimelinePage.html([Self.report(events: count)], source: "S", asStore: nil)
        let data = try #require(page.components(separatedBy: #"class="timeline-data">"#).last?.components(separatedBy: "</script>").first)
        #expect(data.utf8.count <= count * 7, "\(data.utf8.count) bytes for \(count) events")
        #expect(page.utf8.count <= count * 7 + 1_000_000, "\(page.utf8.count) bytes")
    }
}
