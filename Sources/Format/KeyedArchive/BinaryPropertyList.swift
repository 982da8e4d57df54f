import JSONDocument

/// A bounded reader of Apple's binary property lists (`bplist00`), written by hand so that
/// shared leaves (strings, numbers, UIDs, which Apple's writer stores once) are read once, a
/// container reached twice or from inside itself is refused, and nothing is allocated beyond what
/// the file's size allows (Spec/device-state.md 3.1).
struct BinaryPropertyList {
    static let magic = Array("bplist00".utf8)

    private let bytes: [UInt8]
    private let maximumDepth: Int
    private var offsetSize = 0
    private var referenceSize = 0
    private var objectCount = 0
    private var tableOffset = 0
    /// Leaves already read, by object number.
    private var leaves: [Int: PropertyListValue] = [:]
    /// Containers already read (or being read): each may be reached once.
    private var containersSeen: Set<Int> = []

    init(_ bytes: [UInt8], maximumDepth: Int) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
    }

    private func failure(_ message: String, at offset: Int? = nil) -> FormatError {
        FormatError(.archiveNotPropertyList, message, location: FormatError.Location(offset: offset))
    }

    /// Big-endian unsigned integer of `size` bytes at `position`; the caller checked the range.
    private func integer(at position: Int, size: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in 0..<size { value = value << 8 | UInt64(bytes[position + index]) }
        return value
    }

    mutating func read() throws(FormatError) -> PropertyListValue {
        guard bytes.count >= Self.magic.count + 32 else { throw failure("a binary property list shorter than its header and trailer") }
        let trailer = bytes.count - 32
        offsetSize = Int(bytes[trailer + 6])
        referenceSize = Int(bytes[trailer + 7])
        let count = integer(at: trailer + 8, size: 8), top = integer(at: trailer + 16, size: 8), table = integer(at: trailer + 24, size: 8)
        guard (1...8).contains(offsetSize), (1...8).contains(referenceSize), count > 0, count <= UInt64(bytes.count), top < count,
            table >= 8, table <= UInt64(trailer), (UInt64(trailer) - table) / UInt64(offsetSize) >= count
        else { throw failure("a binary property list whose trailer does not fit the file", at: trailer) }
        objectCount = Int(count)
        tableOffset = Int(table)
        return try object(Int(top), depth: 1)
    }

    /// Where object `number` starts.
    private func start(of number: Int) throws(FormatError) -> Int {
        let value = integer(at: tableOffset + number * offsetSize, size: offsetSize)
        guard value >= 8, value < UInt64(tableOffset) else { throw failure("object \(number) lies outside the file") }
        return Int(value)
    }

    /// The length in a marker's low nibble, or the integer object after it when the nibble is 0xF;
    /// returns the length and where the content starts.
    private func length(marker position: Int) throws(FormatError) -> (Int, Int) {
        let nibble = Int(bytes[position] & 0x0F)
        guard nibble == 0x0F else { return (nibble, position + 1) }
        let next = position + 1
        guard next < tableOffset, bytes[next] >> 4 == 0x1, bytes[next] & 0x0F <= 3 else { throw failure("a malformed length", at: position) }
        let size = 1 << Int(bytes[next] & 0x0F)
        guard next + 1 + size <= tableOffset else { throw failure("a malformed length", at: position) }
        let value = integer(at: next + 1, size: size)
        guard value <= UInt64(tableOffset) else { throw failure("a length beyond the file", at: position) }
        return (Int(value), next + 1 + size)
    }

    /// `count` bytes from `position`, which must end before the offset table.
    private func content(_ position: Int, _ count: Int, at marker: Int) throws(FormatError) -> ArraySlice<UInt8> {
        guard count >= 0, position <= tableOffset, count <= tableOffset - position else { throw failure("an object that runs past its end", at: marker) }
        return bytes[position..<(position + count)]
    }

    private mutating func object(_ number: Int, depth: Int) throws(FormatError) -> PropertyListValue {
        guard number < objectCount else { throw failure("a reference to object \(number) of \(objectCount)") }
        if let leaf = leaves[number] { return leaf }
        let position = try start(of: number)
        let marker = bytes[position]
        switch marker >> 4 {
        case 0xA, 0xC, 0xD:
            guard containersSeen.insert(number).inserted else {
                throw failure("a container reached twice (shared or cyclic references)", at: position)
            }
            guard depth <= maximumDepth else {
                throw FormatError(.archiveTooDeep, "a property list nested deeper than \(maximumDepth)", location: .init(offset: position))
            }
            let (count, first) = try length(marker: position)
            let isDictionary = marker >> 4 == 0xD
            let references = isDictionary ? 2 * count : count
            let slice = try content(first, references * referenceSize, at: position)
            var numbers: [Int] = []
            numbers.reserveCapacity(references)
            for index in 0..<references {
                let value = integer(at: slice.startIndex + index * referenceSize, size: referenceSize)
                guard value < UInt64(objectCount) else { throw failure("a reference to no object", at: position) }
                numbers.append(Int(value))
            }
            if !isDictionary {
                var values: [PropertyListValue] = []
                values.reserveCapacity(count)
                for element in numbers { values.append(try object(element, depth: depth + 1)) }
                return .array(values)
            }
            var values: [ExactString: PropertyListValue] = [:]
            values.reserveCapacity(count)
            for index in 0..<count {
                guard case .string(let key) = try object(numbers[index], depth: depth + 1) else {
                    throw failure("a dictionary key that is not a string", at: position)
                }
                guard values[ExactString(key)] == nil else { throw failure("a dictionary with the key \"\(key)\" twice", at: position) }
                values[ExactString(key)] = try object(numbers[count + index], depth: depth + 1)
            }
            return .dictionary(values)
        default:
            let value = try leaf(at: position)
            leaves[number] = value
            return value
        }
    }

    private func leaf(at position: Int) throws(FormatError) -> PropertyListValue {
        let marker = bytes[position]
        let nibble = Int(marker & 0x0F)
        switch marker >> 4 {
        case 0x0:
            switch marker {
            case 0x08: return .bool(false)
            case 0x09: return .bool(true)
            default: throw failure("a null or fill object, which property lists do not hold", at: position)
            }
        case 0x1:
            guard nibble <= 4 else { throw failure("an integer of an unknown size", at: position) }
            let size = 1 << nibble
            let slice = try content(position + 1, size, at: position)
            if size == 16 {
                // 128-bit: what Apple writes for values above 2^63-1; taken when it fits 64-bit signed.
                let high = integer(at: slice.startIndex, size: 8), low = integer(at: slice.startIndex + 8, size: 8)
                guard (high == 0 && low <= UInt64(Int64.max)) || (high == UInt64.max && low > UInt64(Int64.max)) else {
                    throw failure("an integer beyond 64-bit signed", at: position)
                }
                return .integer(Int64(bitPattern: low))
            }
            let raw = integer(at: slice.startIndex, size: size)
            // 1, 2 and 4 bytes are unsigned; 8 bytes are signed.
            return .integer(size == 8 ? Int64(bitPattern: raw) : Int64(raw))
        case 0x2:
            guard nibble == 2 || nibble == 3 else { throw failure("a real of an unknown size", at: position) }
            let slice = try content(position + 1, 1 << nibble, at: position)
            let raw = integer(at: slice.startIndex, size: 1 << nibble)
            return .real(nibble == 2 ? Double(Float(bitPattern: UInt32(raw))) : Double(bitPattern: raw))
        case 0x3:
            guard marker == 0x33 else { throw failure("a date of an unknown size", at: position) }
            let slice = try content(position + 1, 8, at: position)
            return .date(Double(bitPattern: integer(at: slice.startIndex, size: 8)))
        case 0x4:
            let (count, first) = try length(marker: position)
            return .data(Array(try content(first, count, at: position)))
        case 0x5:
            let (count, first) = try length(marker: position)
            let slice = try content(first, count, at: position)
            guard slice.allSatisfy({ $0 < 0x80 }) else { throw failure("an ASCII string with a byte above 0x7F", at: position) }
            return .string(String(decoding: slice, as: UTF8.self))
        case 0x6:
            let (count, first) = try length(marker: position)
            guard count <= (tableOffset - first) / 2 else { throw failure("an object that runs past its end", at: position) }
            let slice = try content(first, 2 * count, at: position)
            var units: [UInt16] = []
            units.reserveCapacity(count)
            var index = slice.startIndex
            while index < slice.endIndex {
                units.append(UInt16(slice[index]) << 8 | UInt16(slice[index + 1]))
                index += 2
            }
            guard Self.wellFormed(units) else { throw failure("a UTF-16 string with a lone surrogate", at: position) }
            return .string(String(decoding: units, as: UTF16.self))
        case 0x8:
            guard nibble < 8 else { throw failure("a UID longer than 8 bytes", at: position) }
            let slice = try content(position + 1, nibble + 1, at: position)
            return .uid(integer(at: slice.startIndex, size: nibble + 1))
        default:
            throw failure("an object of unknown kind 0x\(String(marker, radix: 16, uppercase: true))", at: position)
        }
    }

    /// Whether every surrogate of `units` is in a high-low pair.
    private static func wellFormed(_ units: [UInt16]) -> Bool {
        var index = 0
        while index < units.count {
            switch units[index] {
            case 0xD800...0xDBFF:
                guard index + 1 < units.count, (0xDC00...0xDFFF).contains(units[index + 1]) else { return false }
                index += 2
            case 0xDC00...0xDFFF: return false
            default: index += 1
            }
        }
        return true
    }
}
