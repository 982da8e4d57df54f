import Foundation
import Testing
import JSONDocument
import LogToolCore

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
            let files = (data[JSONPointer(["marks"])]?.arrayValue ?? []).compactMap { $0[JSONPointer(["0"])]?.stringValue }
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
