import Testing
import SyntheticHistory
@testable import CloudFolder

/// `Array.permute(to:)`, which puts a folder's entries in the order of their names in place:
/// element `i` afterwards is the one that was at `order[i]`, for every permutation (fixed points,
/// one long cycle, many short ones).
@Suite("Permute in place")
struct PermuteTests {
    static func check(_ order: [Int]) {
        // Strings of more than 15 bytes, so that each element is a reference a wrong move would lose or double.
        let original = order.indices.map { "an entry of the folder, number \($0)" }
        var permuted = original
        permuted.permute(to: order)
        #expect(permuted == order.map { original[$0] }, "order \(order)")
    }

    @Test func shapes() {
        Self.check([])
        Self.check([0])
        Self.check([0, 1, 2, 3])
        Self.check([3, 2, 1, 0])
        Self.check([1, 2, 3, 4, 0])
        Self.check([4, 0, 1, 2, 3])
        Self.check([1, 0, 3, 2, 4, 6, 5])
    }

    @Test func randomPermutations() {
        // Seeded, so that a failure names a permutation that comes again.
        var generator = SplitMix64(seed: 42)
        for count in 0..<64 {
            for _ in 0..<20 { Self.check(Array(0..<count).shuffled(using: &generator)) }
        }
    }
}
