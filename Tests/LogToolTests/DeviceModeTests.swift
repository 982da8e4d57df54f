import Foundation
import Testing
import JSONDocument
import SchemaValidation

/// `merge --as-store` and `verify --as-store` as a user runs them (Spec/merge.md 15.6); the
/// golden `device-*` cases of Fixtures/merge pin the reports themselves.
@Suite("Device mode")
struct DeviceModeTests {
    static let heldBack = "Fixtures/merge/device-held-back"

    @Test("without --json: the state on standard output, one finding line per reason on standard error, exit 1")
    func lines() throws {
        let run = try Run(arguments: ["merge", "--as-store", "STORE-AA", "cloud/E"], in: Run.packageRoot.appendingPathComponent(Self.heldBack))
        #expect(run.status == 1)
        #expect(run.stdout == #"{"entities":{"Item":{"a1":{"title":"a1"},"a2":{"title":"a2"},"b1":{"title":"b1"},"i0":{"title":"base"}}}}"# + "\n")
        let lines = run.stderr.split(separator: "\n").map(String.init)
        #expect(lines.count == 4, "\(run.stderr)")
        #expect(
            lines.first?.hasPrefix("merge.revision-gap (200) cloud/E/events/5_STORE-AA_4.cdeevent [store=STORE-AA, first=3, last=3, delivery=pending]: ")
                == true)
        #expect(lines.contains { $0.hasPrefix("device.not-in-baseline cloud/E/events/8_STORE-CC_0.cdeevent [store=STORE-CC]: ") })
    }

    @Test("--json: one document valid against device.schema.json; --out still writes the state")
    func json() throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("device-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: out) }
        let run = try Run(
            arguments: ["merge", "--as-store", "STORE-AA", "--json", "--out", out.path, "cloud/E"],
            in: Run.packageRoot.appendingPathComponent(Self.heldBack))
        #expect(run.status == 1)
        let document = try JSONParser.parse(Array(run.stdout.utf8))
        #expect(try BundledSchema.device.validator().validate(document).isEmpty)
        let written = try JSONParser.parse(Array(try Data(contentsOf: out)))
        #expect(document[JSONPointer(["state"])] == written)
        #expect(document[JSONPointer(["device", "integrated"])] == JSONValue(Int64(3)))
    }

    @Test("a device that integrates everything exits 0; strict merge of the same folder stops")
    func everything() throws {
        let folder = Run.packageRoot.appendingPathComponent("Fixtures/merge/device-pending")
        #expect(try Run(arguments: ["merge", "--as-store", "STORE-AA", "cloud/E"], in: folder).status == 0)
        #expect(try Run(arguments: ["merge", "cloud/E"], in: folder).status == 1)
    }

    @Test("a device whose registration is gone prints no state")
    func deleech() throws {
        let run = try Run(
            arguments: ["merge", "--as-store", "STORE-AA", "cloud/E"], in: Run.packageRoot.appendingPathComponent("Fixtures/merge/device-deleech"))
        #expect(run.status == 1)
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.hasPrefix("merge.unregistered-store (205) [store=STORE-AA, delivery=missing]: "))
    }

    @Test("verify --as-store adds held-back warnings and stays valid against verify.schema.json")
    func verify() throws {
        let run = try Run(arguments: ["verify", "--as-store", "STORE-AA", "--json", "cloud/E"], in: Run.packageRoot.appendingPathComponent(Self.heldBack))
        let document = try JSONParser.parse(Array(run.stdout.utf8))
        #expect(try BundledSchema.verify.validator().validate(document).isEmpty)
        let diagnostics = document[JSONPointer(["ensembles", "0", "diagnostics"])]?.arrayValue ?? []
        let held = diagnostics.filter { $0[JSONPointer(["code"])] == .string("verify.held-back") }
        #expect(held.count == 4)
        let gap = held.first { $0[JSONPointer(["files", "0"])] == .string("events/5_STORE-AA_4.cdeevent") }
        #expect(gap?[JSONPointer(["details", "delivery"])] == .string("pending"))
        #expect(gap?[JSONPointer(["number"])] == JSONValue(Int64(200)))
        let plain = try Run(arguments: ["verify", "--json", "cloud/E"], in: Run.packageRoot.appendingPathComponent(Self.heldBack))
        #expect(!plain.stdout.contains("verify.held-back"))
        let gone = try Run(
            arguments: ["verify", "--as-store", "STORE-AA", "--json", "cloud/E"], in: Run.packageRoot.appendingPathComponent("Fixtures/merge/device-deleech"))
        let stop = try JSONParser.parse(Array(gone.stdout.utf8))[JSONPointer(["ensembles", "0", "diagnostics"])]?.arrayValue?.first {
            $0[JSONPointer(["code"])] == .string("verify.device-stop")
        }
        #expect(stop?[JSONPointer(["details"])] == .object(JSONObject([("code", .string("merge.unregistered-store")), ("outcome", .string("deleeches"))])))
        #expect(gone.status == 1)
    }
}
