/// The first position in 0..<count where `predicate` holds, for a predicate that holds from some
/// position on: a binary search, shared by the dominance index of baselines, the search for
/// concurrent events and the binary string table's parts.
package func partitionPoint(_ count: Int, _ predicate: (Int) -> Bool) -> Int {
    var low = 0, high = count
    while low < high {
        let middle = (low + high) / 2
        if predicate(middle) { high = middle } else { low = middle + 1 }
    }
    return low
}
