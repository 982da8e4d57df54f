import Foundation
import Testing
import JSONDocument

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
}
