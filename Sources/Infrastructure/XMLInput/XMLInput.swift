import Foundation

/// What an XML document must be before Foundation's `XMLParser` sees it: UTF-8 throughout, with
/// no other encoding declared, and no processing instruction but the XML declaration at its
/// start. The parser stops the process (a trap or a null pointer in FoundationXML) when libxml2
/// hands it an element name or a processing instruction that is not UTF-8, which a document that
/// is not UTF-8 can make it do, or a processing instruction without data
/// (Fuzz/FailCases/webdav-name-not-utf8.xml, s3-instruction-without-data.xml). Every reader of
/// XML in the toolkit asks first: model files (Spec/model.md 3.1) and remote listings
/// (Spec/remote.md 3).
package enum XMLInput {
    /// Nil when `data` may be parsed; otherwise the offset of the first byte at fault and why.
    package static func problem(_ data: Data) -> (offset: Int, reason: String)? {
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = data.makeIterator()
        var offset = 0
        decoding: while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let scalar): offset += scalar.count
            case .emptyInput: break decoding
            case .error: return (offset, "the document is not UTF-8")
            }
        }
        // No processing instruction but the XML declaration at the start: XMLParser reads a
        // processing instruction without data through a null pointer
        // (Fuzz/FailCases/s3-instruction-without-data.xml); model files and listings hold none.
        let bytes = [UInt8](data)
        let start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        let hasDeclaration = bytes[start...].starts(with: Array("<?xml ".utf8)) || bytes[start...].starts(with: Array("<?xml\n".utf8))
        var index = hasDeclaration ? start + 5 : start
        while index + 1 < bytes.count {
            if bytes[index] == UInt8(ascii: "<") && bytes[index + 1] == UInt8(ascii: "?") {
                return (index, "a processing instruction other than the XML declaration at the start")
            }
            index += 1
        }
        guard hasDeclaration else { return nil }
        // The encoding declaration, when there is one, must name UTF-8 (a document in another
        // encoding would be converted by libxml2; neither Xcode nor any server writes one).
        let head = String(decoding: bytes[start...].prefix(512), as: UTF8.self)
        guard let end = head.range(of: "?>") else { return nil }
        let declaration = head[..<end.lowerBound]
        guard let encoding = declaration.range(of: "encoding") else { return nil }
        let value = declaration[encoding.upperBound...].drop { $0 == " " || $0 == "=" || $0 == "\"" || $0 == "'" }
            .prefix { $0 != "\"" && $0 != "'" && $0 != " " }
        guard value.lowercased() == "utf-8" || value.lowercased() == "utf8" else {
            return (start + head.utf8.distance(from: head.utf8.startIndex, to: encoding.lowerBound), "the document declares the encoding \(value), not UTF-8")
        }
        return nil
    }
}
