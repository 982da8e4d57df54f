/// Decimal text as the `timestamp` key and the `decimal` tag of v2 events accept it (Spec/v2-json.md),
/// checked on ASCII bytes without a regular expression:
/// `-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
package func isDecimalText(_ text: String) -> Bool {
    var bytes = Substring(text).utf8[...]
    func digits() -> Bool {
        let count = bytes.prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }.count
        bytes = bytes.dropFirst(count)
        return count > 0
    }
    if bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
    guard digits() else { return false }
    if bytes.first == UInt8(ascii: ".") {
        bytes = bytes.dropFirst()
        guard digits() else { return false }
    }
    if bytes.first == UInt8(ascii: "e") || bytes.first == UInt8(ascii: "E") {
        bytes = bytes.dropFirst()
        if bytes.first == UInt8(ascii: "+") || bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
        guard digits() else { return false }
    }
    return bytes.isEmpty
}
