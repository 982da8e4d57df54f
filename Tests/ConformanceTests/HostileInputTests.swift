import Foundation
import Testing
import JSONDocument
import DataModel
import CloudFolder
import TestSupport

/// Mutated copies of every fixture file go through the whole reading pipeline: each must be
/// rejected or read, never crash. Deterministic (a fixed-seed generator), so a failure repeats.
@Suite("Hostile input")
struct HostileInputTests {
    typealias Generator = SplitMix64

    static let sources: [String] = ["v2-json/valid", "v2-json/invalid", "v1-json/valid", "v1-json/invalid", "v2-json/model-invalid"]
        .flatMap { folder in Fixtures.files(in: folder, suffix: ".json").map { "\(folder)/\($0)" } }

    static func mutate(_ bytes: [UInt8], using generator: inout Generator) -> [UInt8] {
        var result = bytes
        for _ in 0..<Int.random(in: 1...4, using: &generator) {
            guard !result.isEmpty else { break }
            let position = Int.random(in: 0..<result.count, using: &generator)
            switch Int.random(in: 0..<6, using: &generator) {
            case 0: result[position] = UInt8.random(in: 0...255, using: &generator)
            case 1: result.removeSubrange(position...)
            case 2: result.insert(contentsOf: Array("[[[[{\"\u{1F600}\":".utf8), at: position)
            case 3: result.remove(at: position)
            case 4: result.insert(contentsOf: Array("1e999999999".utf8), at: position)
            default: result[position] = Array("\"\\,{}[]:0-.eE".utf8).randomElement(using: &generator) ?? 0
            }
        }
        return result
    }

    @Test("100 mutations of each fixture file are read or rejected, never crash", arguments: sources)
    func mutations(file: String) throws {
        let model = try ModelBundle(path: Fixtures.url("models/Inheritance.xcdatamodeld").path).load()
        let readers = [EventFileReader(), EventFileReader(lenient: true, model: model)]
        let original = try Fixtures.bytes(file)
        var generator = Generator(seed: UInt64(truncatingIfNeeded: file.utf8.reduce(0) { $0 &* 31 &+ Int($1) }))
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("hostile-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: scratch) }
        for _ in 0..<100 {
            let mutated = Self.mutate(original, using: &generator)
            try Data(mutated).write(to: scratch)
            for reader in readers {
                let result = reader.readFile(at: scratch, displayName: file)
                // Every outcome is one of the two: events, or errors that say why.
                #expect(result.errors.isEmpty != result.events.isEmpty || (result.errors.isEmpty && result.isLog))
                _ = reader.decodePart(mutated, position: .part(index: 2, count: 3), displayName: file)
            }
        }
    }
}
