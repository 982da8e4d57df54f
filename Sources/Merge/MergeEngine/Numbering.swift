import JSONDocument

/// Names numbered in the order they first appear (byte-exact, as ``ExactString`` compares): a
/// state's entity and property names, an event store's store identifiers.
struct Numbering: Sendable {
    private var names: [String] = []
    /// ``ExactString/prefixKey(_:)`` of each name while the list is short, by number: searched
    /// first, they spare a byte comparison (a call and a `memcmp`) per name passed over; store
    /// identifiers share no short prefix, so their keys settle almost every comparison.
    private var prefixes: [UInt64] = []
    private var numbers: [ExactString: Int32] = [:]
    /// Names met lately, by their representation: a change's names are usually the very
    /// strings (or the same small strings) of the changes before it, found without reading
    /// their bytes. The strings are held, so a representation is never reused while cached.
    private var recent = [(name: String, number: Int32)](repeating: ("", -1), count: 64)

    mutating func number(_ name: String) -> Int32 {
        let slot = Int(truncatingIfNeeded: ExactString.representationHash(name) >> 58)
        if recent[slot].number >= 0 && ExactString.identical(recent[slot].name, name) { return recent[slot].number }
        let number = lookUp(name)
        recent[slot] = (name, number)
        return number
    }

    private mutating func lookUp(_ name: String) -> Int32 {
        // There are usually a few (a model's names, an ensemble's stores): comparing bytes beats
        // hashing them.
        if names.count <= 16 {
            let prefix = ExactString.prefixKey(name)
            let exact = ExactString(name)
            for index in prefixes.indices where prefixes[index] == prefix && ExactString(names[index]) == exact { return Int32(index) }
            prefixes.append(prefix)
        } else if let number = numbers[ExactString(name)] {
            return number
        }
        let number = Int32(names.count)
        names.append(name)
        numbers[ExactString(name)] = number
        return number
    }

    /// The number of a name already seen.
    func existing(_ name: String) -> Int32? { numbers[ExactString(name)] }

    var count: Int { names.count }

    subscript(number: Int32) -> String { names[Int(number)] }
}
