import Foundation
import Testing
import JSONDocument
import FileWrappers
@testable import CloudFolder

/// Spec/README.md 6.2: an event file decodes to at most 2 values per byte as stored (at least
/// 65,536), whatever its wrappers; the same content is read when it is stored plain.
@Suite("Event files: decoded values bounded by the size as stored")
struct ValueBudgetTests {
    /// A v2 event with an unknown member of `count` numbers, 0 but one in 32 (seeded): about 2
    /// bytes per value, which zip deflates between 23 and 100 times (the ratio rule keeps it
    /// deflated, and the stored size then allows fewer values than the content holds).
    static func event(numbers count: Int) -> [UInt8] {
        var state: UInt64 = 42
        let numbers = (0..<count).map { _ -> String in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 59 == 0 ? "1" : "0"
        }
        let text =
            #"{"uniqueIdentifier":"U","type":200,"globalCount":0,"timestamp":"0","storeIdentifier":"S","#
            + #""revisionsByStoreIdentifier":{"S":0},"changesByEntity":{},"extra":["# + numbers.joined(separator: ",") + "]}"
        return Array(text.utf8)
    }

    @Test("a zipped event of 200,000 values in a few kilobytes is json.too-large naming the file, the limit and the size; stored plain it is read")
    func zippedJSON() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("value-budget-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let content = Self.event(numbers: 200_000)
        let zipped = ZipArchive.write(name: "0_S_0.cdeevent", content: content)
        // Deflated (the first layer's method field, 8), and small enough that its budget is the
        // smallest one.
        #expect(zipped[8] == 8 && zipped.count < 32_768, "\(zipped.count) bytes")
        let zipURL = folder.appendingPathComponent("zipped.cdeevent")
        let plainURL = folder.appendingPathComponent("plain.cdeevent")
        try Data(zipped).write(to: zipURL)
        try Data(content).write(to: plainURL)

        let refused = EventFileReader().readFile(at: zipURL, displayName: "zipped.cdeevent")
        let error = try #require(refused.errors.first)
        #expect(refused.events.isEmpty && refused.errors.count == 1)
        #expect(error.code == .jsonTooLarge)
        #expect(error.location.file == "zipped.cdeevent")
        #expect(error.message.contains("65536") && error.message.contains("\(zipped.count) bytes as stored"), "\(error.message)")

        let plain = EventFileReader().readFile(at: plainURL, displayName: "plain.cdeevent")
        #expect(plain.errors.isEmpty && plain.events.count == 1, "\(plain.errors)")
        let part = EventFileReader().readPart(at: zipURL, position: .single, displayName: "zipped.cdeevent")
        #expect(part.errors.map(\.code) == [.jsonTooLarge], "a folder's reader applies the same budget")
    }
}
