/// Checks the object graph of a binary property list before Foundation reads it
/// (Spec/cloud-layout.md 5): every object reached at most once and nested at most 64 deep.
///
/// Written by hand because `PropertyListSerialization` expands shared references: a 470-byte file
/// whose arrays reference each other in a chain (a DAG, 2^50 paths) makes it allocate without bound
/// until the process is killed, and no option of it limits that. This walks the offset table and
/// the container objects only (the format's public trailer, offset table and markers); the values
/// themselves are left to Foundation.
package enum BinaryPropertyListShape {
    package static let magic = Array("bplist0".utf8)
    package static let maximumDepth = 64

    /// nil when the shape is safe to hand to Foundation, or why it is not. Files that are not
    /// binary property lists (XML) are not this check's business: nil.
    package static func problem(_ bytes: [UInt8]) -> String? {
        guard bytes.starts(with: magic) else { return nil }
        guard bytes.count >= 8 + 32 else { return "a binary property list shorter than its header and trailer" }
        let trailer = bytes.count - 32
        let offsetSize = Int(bytes[trailer + 6]), referenceSize = Int(bytes[trailer + 7])
        let objectCount = integer(bytes, at: trailer + 8, size: 8), top = integer(bytes, at: trailer + 16, size: 8)
        let tableOffset = integer(bytes, at: trailer + 24, size: 8)
        guard (1...8).contains(offsetSize), (1...8).contains(referenceSize), objectCount > 0, objectCount <= UInt64(bytes.count), top < objectCount,
            tableOffset >= 8, tableOffset <= UInt64(trailer), UInt64(trailer) - tableOffset >= objectCount * UInt64(offsetSize)
        else { return "a binary property list whose trailer does not fit the file" }
        let count = Int(objectCount)
        func offset(_ object: Int) -> Int? {
            let value = integer(bytes, at: Int(tableOffset) + object * offsetSize, size: offsetSize)
            return value >= 8 && value < tableOffset ? Int(value) : nil
        }
        var visited = [Bool](repeating: false, count: count)
        var stack: [(object: Int, depth: Int)] = [(Int(top), 1)]
        while let (object, depth) = stack.popLast() {
            guard !visited[object] else { return "a binary property list that reaches one object twice (shared or cyclic references)" }
            visited[object] = true
            guard depth <= maximumDepth else { return "a binary property list nested deeper than \(maximumDepth)" }
            guard let start = offset(object) else { return "a binary property list with an object outside the file" }
            let marker = bytes[start]
            let kind = marker >> 4
            // Arrays (0xA), sets (0xC) and dictionaries (0xD) reference other objects.
            guard kind == 0xA || kind == 0xC || kind == 0xD else { continue }
            var position = start + 1
            var length = Int(marker & 0x0F)
            if length == 0x0F {
                guard position < Int(tableOffset), bytes[position] >> 4 == 0x1 else { return "a binary property list with a malformed length" }
                let size = 1 << Int(bytes[position] & 0x0F)
                guard size <= 8, position + 1 + size <= Int(tableOffset) else { return "a binary property list with a malformed length" }
                let value = integer(bytes, at: position + 1, size: size)
                guard value <= UInt64(count) else { return "a binary property list with more references than objects" }
                length = Int(value)
                position += 1 + size
            }
            let references = kind == 0xD ? 2 * length : length
            guard references <= count, position + references * referenceSize <= Int(tableOffset) else {
                return "a binary property list with references outside the file"
            }
            for index in 0..<references {
                let reference = integer(bytes, at: position + index * referenceSize, size: referenceSize)
                guard reference < objectCount else { return "a binary property list with a reference to no object" }
                stack.append((Int(reference), depth + 1))
            }
        }
        return nil
    }

    /// A big-endian unsigned integer of `size` bytes at `offset` (the caller checked the bounds).
    private static func integer(_ bytes: [UInt8], at offset: Int, size: Int) -> UInt64 {
        guard offset >= 0, offset + size <= bytes.count else { return .max }
        return bytes[offset..<(offset + size)].reduce(0) { $0 << 8 | UInt64($1) }
    }
}
