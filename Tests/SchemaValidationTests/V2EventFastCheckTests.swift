import Foundation
import Testing
import JSONDocument
import SchemaValidation
import TestSupport

/// The fast check may only say "valid" where the v2 event schema's generic validator finds
/// nothing (otherwise the reader would skip a violation); it should say so for every ordinary
/// event (otherwise it saves nothing). Checked on every JSON file of the fixtures and on seeded
/// mutations of the valid ones.
@Suite("v2 event fast check")
struct V2EventFastCheckTests {
    @Test("on every fixture: the same verdict as the validator")
    func fixturesAgree() throws {
        let validator = try BundledSchema.v2Event.validator()
        let documents = FixtureDocuments.json()
        #expect(documents.count > 300)
        var accepted = 0
        for (name, value) in documents {
            let valid = validator.validate(value).isEmpty
            let fast = V2EventFastCheck.accepts(value)
            #expect(fast == valid, "\(name): fast \(fast), validator \(valid)")
            if fast { accepted += 1 }
        }
        #expect(accepted > 200)
    }

    @Test("on 5,000 mutations (20,000 in the long run): never valid where the validator finds a violation")
    func mutationsAreSound() throws {
        let rounds = LongRun.count(5_000, long: 20_000)
        let validator = try BundledSchema.v2Event.validator()
        let valid = FixtureDocuments.json().map(\.value).filter { validator.validate($0).isEmpty }
        #expect(!valid.isEmpty)
        var random = SplitMix64(seed: 2026)
        var disagreements = (unsound: 0, cautious: 0, invalid: 0)
        for round in 0..<rounds {
            var value = valid[round % valid.count]
            for _ in 0...Int.random(in: 0..<3, using: &random) { value = JSONMutation.mutate(value, using: &random) }
            let generic = validator.validate(value).isEmpty
            let fast = V2EventFastCheck.accepts(value)
            if fast && !generic { disagreements.unsound += 1 }
            if !fast && generic { disagreements.cautious += 1 }
            if !generic { disagreements.invalid += 1 }
            #expect(!(fast && !generic), "round \(round): the fast check accepts \(JSONWriter().string(value))")
        }
        // Enough of the mutations must break the schema for the test to mean something.
        #expect(disagreements.invalid > rounds / 4)
        #expect(disagreements.unsound == 0)
    }
}
