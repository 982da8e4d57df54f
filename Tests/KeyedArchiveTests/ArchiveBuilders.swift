import Foundation

/// Keyed archives written by hand for the tests: XML property lists whose `CF$UID` dictionaries
/// Foundation reads as references, and a minimal binary property list writer for archives too
/// large to write as text.
enum ArchiveXML {
    static func uid(_ number: Int) -> String { "<dict><key>CF$UID</key><integer>\(number)</integer></dict>" }

    static func classDescription(_ name: String, _ superclasses: [String] = ["NSObject"]) -> String {
        let names = ([name] + superclasses).map { "<string>\($0)</string>" }.joined()
        return "<dict><key>$classname</key><string>\(name)</string><key>$classes</key><array>\(names)</array></dict>"
    }

    /// An object of the class at `classNumber` with `members` (already written as XML values).
    static func object(classNumber: Int, _ members: [(String, String)]) -> String {
        "<dict><key>$class</key>\(uid(classNumber))" + members.map { "<key>\($0.0)</key>\($0.1)" }.joined() + "</dict>"
    }

    static func references(_ numbers: [Int]) -> String { "<array>" + numbers.map(uid).joined() + "</array>" }

    /// A whole archive: `objects` follow `$null`, so the first of them is object 1.
    static func archive(
        _ objects: [String], top: String? = "<dict><key>root</key>\(uid(1))</dict>", archiver: String = "NSKeyedArchiver",
        version: String = "<integer>100000</integer>"
    ) -> [UInt8] {
        var text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0"><dict><key>$archiver</key><string>\(archiver)</string><key>$version</key>\(version)
            """
        if let top { text += "<key>$top</key>\(top)" }
        text += "<key>$objects</key><array><string>$null</string>" + objects.joined() + "</array></dict></plist>\n"
        return Array(text.utf8)
    }
}

/// Writes binary property lists (`bplist00`) from raw objects, for archives that would be too
/// large as XML. Each object is its encoded bytes; references are object numbers.
struct BinaryPlistWriter {
    var objects: [[UInt8]] = []
    let referenceSize: Int

    init(referenceSize: Int) { self.referenceSize = referenceSize }

    @discardableResult
    mutating func add(_ bytes: [UInt8]) -> Int {
        objects.append(bytes)
        return objects.count - 1
    }

    static func big(_ value: Int, size: Int) -> [UInt8] { (0..<size).map { UInt8(truncatingIfNeeded: value >> (8 * (size - 1 - $0))) } }

    /// A marker with its length: in the low nibble, or as a following integer object.
    static func marker(_ kind: UInt8, count: Int) -> [UInt8] {
        if count < 15 { return [kind << 4 | UInt8(count)] }
        return [kind << 4 | 0x0F, 0x12] + big(count, size: 4)
    }

    static func ascii(_ text: String) -> [UInt8] { marker(0x5, count: text.utf8.count) + Array(text.utf8) }
    /// A string of any text, as UTF-16 big-endian (what Apple's writer uses for text that is not ASCII).
    static func unicode(_ text: String) -> [UInt8] {
        marker(0x6, count: text.utf16.count) + text.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
    }
    static func integer(_ value: Int) -> [UInt8] { [0x12] + big(value, size: 4) }
    static func uid(_ value: Int) -> [UInt8] { [0x83] + big(value, size: 4) }

    func array(_ references: [Int]) -> [UInt8] {
        Self.marker(0xA, count: references.count) + references.flatMap { Self.big($0, size: referenceSize) }
    }

    func dictionary(_ pairs: [(Int, Int)]) -> [UInt8] {
        Self.marker(0xD, count: pairs.count) + pairs.flatMap { Self.big($0.0, size: referenceSize) }
            + pairs.flatMap { Self.big($0.1, size: referenceSize) }
    }

    func bytes(top: Int) -> [UInt8] {
        var output = Array("bplist00".utf8)
        var offsets: [Int] = []
        for object in objects {
            offsets.append(output.count)
            output += object
        }
        let tableOffset = output.count
        for offset in offsets { output += Self.big(offset, size: 4) }
        output += [0, 0, 0, 0, 0, 0, 4, UInt8(referenceSize)]
        output += Self.big(objects.count, size: 8) + Self.big(top, size: 8) + Self.big(tableOffset, size: 8)
        return output
    }
}
