import Foundation
import JSONDocument
import KeyedArchive
import Testing

typealias X = ArchiveXML

/// The reader on archives written by hand: every Foundation class of the allow-list, generic
/// objects, and each rejection with its code and location (Spec/device-state.md 3).
@Suite("Keyed archive reader")
struct KeyedArchiveTests {
    static func rejection(_ bytes: [UInt8], _ reader: KeyedArchiveReader = KeyedArchiveReader()) -> FormatError? {
        do throws(FormatError) {
            _ = try reader.read(bytes)
            return nil
        } catch {
            return error
        }
    }

    @Test("an array of CDEPropertyChangeValue, as Ensembles 1.x archives property changes, decodes with its members")
    func propertyChangeValues() throws {
        let bytes = X.archive([
            X.object(classNumber: 8, [("NS.objects", X.references([2]))]),  // 1: the array
            X.object(
                classNumber: 7,
                [
                    ("classVersion", "<integer>1</integer>"), ("propertyName", X.uid(3)), ("type", "<integer>2</integer>"),
                    ("value", X.uid(0)), ("addedIdentifiers", X.uid(4)),
                ]),  // 2
            "<string>tags</string>",  // 3
            X.object(classNumber: 9, [("NS.objects", X.references([5, 6]))]),  // 4: a set
            "<string>tag-1</string>", "<string>tag-2</string>",  // 5, 6
            X.classDescription("CDEPropertyChangeValue"),  // 7
            X.classDescription("NSMutableArray", ["NSArray", "NSObject"]),  // 8
            X.classDescription("NSSet"),  // 9
        ])
        let archive = try KeyedArchiveReader().read(bytes)
        let change = ArchivedObject(
            className: "CDEPropertyChangeValue", classes: ["CDEPropertyChangeValue", "NSObject"],
            members: Dictionary(
                uniqueKeysWithValues: [
                    ("classVersion", .integer(1)), ("propertyName", .string("tags")), ("type", .integer(2)), ("value", .null),
                    ("addedIdentifiers", .set([.string("tag-1"), .string("tag-2")])),
                ].map { (ExactString($0), $1) }))
        #expect(archive.root == .array([.object(change)]))
        #expect(archive.linked.isEmpty)
    }

    @Test("keys and strings that differ only in Unicode normalisation are two, in XML and binary lists and in archives (Spec/README.md 4)")
    func twinNames() throws {
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        #expect(composed == decomposed)  // to Swift's String, which is why the readers do not use it
        let xml = "<?xml version=\"1.0\"?><plist><dict><key>\(composed)</key><integer>1</integer><key>\(decomposed)</key><integer>2</integer></dict></plist>"
        var writer = BinaryPlistWriter(referenceSize: 1)
        let root = writer.add([])
        let keys = [composed, decomposed].map { writer.add(BinaryPlistWriter.unicode($0)) }
        let values = [1, 2].map { writer.add(BinaryPlistWriter.integer($0)) }
        writer.objects[root] = writer.dictionary([(keys[0], values[0]), (keys[1], values[1])])
        for bytes in [Array(xml.utf8), writer.bytes(top: root)] {
            let value = try PropertyListValue.read(bytes, maximumBytes: 1 << 20, maximumDepth: 8)
            guard case .dictionary(let members) = value else {
                Issue.record("not a dictionary: \(value)")
                continue
            }
            #expect(members.count == 2)
            #expect(members[composed] == .integer(1) && members[decomposed] == .integer(2))
        }
        #expect(PropertyListValue.string(composed) != .string(decomposed))
        // In an archive: a generic object's members, and a dictionary's keys.
        let archive = try KeyedArchiveReader().read(
            X.archive([
                X.object(classNumber: 3, [("NS.keys", X.references([4, 5])), ("NS.objects", X.references([2, 6]))]),  // 1
                X.object(classNumber: 7, [(composed, "<integer>1</integer>"), (decomposed, "<integer>2</integer>")]),  // 2
                X.classDescription("NSDictionary"),  // 3
                "<string>\(composed)</string>", "<string>\(decomposed)</string>", "<string>\(decomposed)</string>",  // 4, 5, 6
                X.classDescription("CDEPropertyChangeValue"),  // 7
            ]))
        let object = try #require(archive.root?.value(forKey: composed))
        #expect(object[member: composed] == .integer(1) && object[member: decomposed] == .integer(2))
        #expect(archive.root?.value(forKey: decomposed) == .string(decomposed))
        #expect(ArchivedValue.string(composed) != .string(decomposed))
        // Class names too: one spelt with U+212A KELVIN SIGN is not the allowed `KThing`.
        let kelvin = X.archive([X.object(classNumber: 2, []), X.classDescription("\u{212A}Thing")])
        #expect("\u{212A}Thing" == "KThing")
        #expect(Self.rejection(kelvin, KeyedArchiveReader(classes: ArchiveClasses(keyedClasses: ["KThing": []])))?.code == .archiveClassNotAllowed)
        #expect(Self.rejection(kelvin, KeyedArchiveReader(classes: ArchiveClasses(keyedClasses: ["\u{212A}Thing": []]))) == nil)
    }

    @Test("dictionaries, strings, dates, data, null, UUID and URL decode as Foundation archives them")
    func foundationValues() throws {
        let uuidBytes = "<data>EjRWeJCrze8SNFZ4kKvN7w==</data>"  // 12345678-90ab-cdef-1234-567890abcdef
        let bytes = X.archive([
            X.object(classNumber: 2, [("NS.keys", X.references([3, 4, 5, 6, 7, 8, 9])), ("NS.objects", X.references([10, 11, 12, 13, 14, 15, 17]))]),
            X.classDescription("NSDictionary"),  // 2
            "<string>s</string>", "<string>d</string>", "<string>b</string>", "<string>n</string>", "<string>u</string>", "<string>url</string>",
            "<string>o</string>",  // 3...9
            X.object(classNumber: 18, [("NS.string", "<string>mutable</string>")]),  // 10
            X.object(classNumber: 19, [("NS.time", "<real>10.5</real>")]),  // 11
            X.object(classNumber: 20, [("NS.data", "<data>AAEC</data>")]),  // 12
            X.object(classNumber: 21, []),  // 13
            X.object(classNumber: 22, [("NS.uuidbytes", uuidBytes)]),  // 14
            X.object(classNumber: 23, [("NS.base", X.uid(16)), ("NS.relative", X.uid(24))]),  // 15
            X.object(classNumber: 23, [("NS.base", X.uid(0)), ("NS.relative", X.uid(25))]),  // 16
            X.object(classNumber: 26, [("NS.objects", X.references([3, 4]))]),  // 17
            X.classDescription("NSMutableString"), X.classDescription("NSDate"), X.classDescription("NSMutableData"),  // 18, 19, 20
            X.classDescription("NSNull"), X.classDescription("NSUUID"), X.classDescription("NSURL"),  // 21, 22, 23
            "<string>a/b</string>", "<string>file:///base/</string>",  // 24, 25
            X.classDescription("NSOrderedSet"),  // 26
        ])
        let archive = try KeyedArchiveReader().read(bytes)
        let uuid = try #require(UUID(uuidString: "12345678-90AB-CDEF-1234-567890ABCDEF"))
        let expected: [ArchivedPair] = [
            ArchivedPair(key: .string("s"), value: .string("mutable")),
            ArchivedPair(key: .string("d"), value: .date(10.5)),
            ArchivedPair(key: .string("b"), value: .data([0, 1, 2])),
            ArchivedPair(key: .string("n"), value: .null),
            ArchivedPair(key: .string("u"), value: .uuid(uuid)),
            ArchivedPair(key: .string("url"), value: .url(base: .url(base: nil, relative: "file:///base/"), relative: "a/b")),
            ArchivedPair(key: .string("o"), value: .orderedSet([.string("s"), .string("d")])),
        ]
        #expect(archive.root == .dictionary(expected))
        #expect(archive.root?.value(forKey: "s") == .string("mutable"))
    }

    @Test("XML text: the five entities and character references expand, CDATA is kept, dates count from 2001 in UTC")
    func xmlText() throws {
        let bytes = X.archive([
            X.object(classNumber: 5, [("NS.objects", X.references([2, 3, 4]))]),
            "<string>a &lt;&amp;&gt; &quot;b&apos; &#65;&#x42;<![CDATA[<c>]]><!-- not text --></string>",
            "<date>2013-08-19T13:05:07Z</date>",  // 398,610,307 s after 2001-01-01 (Python's datetime)
            "<date>1999-12-31T23:59:59Z</date>",  // -31,622,401 s
            X.classDescription("NSArray"),
        ])
        let expected: [ArchivedValue] = [.string("a <&> \"b' AB<c>"), .date(398_610_307), .date(-31_622_401)]
        #expect(try KeyedArchiveReader().read(bytes).root == .array(expected))
    }

    @Test("malformed XML is refused at its byte offset, without Foundation")
    func malformedXML() {
        let cases = [
            "<plist><dict><key>a</key></dict></plist>",  // a key without a value
            "<plist><string>unclosed</plist>",
            "<plist><string>&bogus;</string></plist>",
            "<plist><unknown/></plist>",
            "<plist><integer>99999999999999999999</integer></plist>",
            "<plist><date>2013-13-01T00:00:00Z</date></plist>",
            "<plist><data>!!!</data></plist>",
            "<plist><dict><key>a</key><true/><key>a</key><true/></dict></plist>",
            "<plist><true/></plist> trailing",
        ]
        for text in cases {
            let error = Self.rejection(Array(text.utf8))
            #expect(error?.code == .archiveNotPropertyList, "\(text)")
            #expect(error?.location.offset != nil, "\(text)")
        }
        // Deep XML nesting stops at the depth limit, not at the end of the stack.
        let deep = "<plist>" + String(repeating: "<array>", count: 10_000) + "</plist>"
        #expect(Self.rejection(Array(deep.utf8))?.code == .archiveTooDeep)
    }

    @Test("an object shared by two places decodes once and appears in both")
    func sharedObject() throws {
        let bytes = X.archive([
            X.object(classNumber: 3, [("NS.objects", X.references([2, 2]))]),
            "<string>shared</string>",
            X.classDescription("NSArray"),
        ])
        #expect(try KeyedArchiveReader().read(bytes).root == .array([.string("shared"), .string("shared")]))
    }

    // MARK: hostile archives

    @Test("an array that contains itself is a cycle, located at the object")
    func cycle() {
        let bytes = X.archive([X.object(classNumber: 2, [("NS.objects", X.references([1]))]), X.classDescription("NSArray")])
        let error = Self.rejection(bytes)
        #expect(error?.code == .archiveCycle)
        #expect(error?.location.pointer == JSONPointer(["$objects", "1"]))
    }

    @Test("a cycle through two generic objects is refused too")
    func cycleThroughObjects() {
        let bytes = X.archive([
            X.object(classNumber: 3, [("next", X.uid(2))]), X.object(classNumber: 3, [("next", X.uid(1))]), X.classDescription("CDEPropertyChangeValue"),
        ])
        #expect(Self.rejection(bytes)?.code == .archiveCycle)
    }

    @Test("a chain of arrays 100 or 65 deep is refused at the depth limit; 64 deep is read")
    func depth() throws {
        func chain(_ length: Int) -> [UInt8] {
            // Object i (1...length) holds object i + 1; the last one is empty; the class is last.
            let classNumber = length + 1
            var objects: [String] = []
            for index in 1...length {
                objects.append(X.object(classNumber: classNumber, [("NS.objects", X.references(index < length ? [index + 1] : []))]))
            }
            return X.archive(objects + [X.classDescription("NSArray")])
        }
        let error = Self.rejection(chain(100))
        #expect(error?.code == .archiveTooDeep)
        #expect(error?.location.pointer == JSONPointer(["$objects", "65"]))
        // 64 arrays are 64 levels: the limit itself is allowed.
        #expect(Self.rejection(chain(64)) == nil)
        #expect(Self.rejection(chain(65))?.code == .archiveTooDeep)
    }

    @Test("a shared object reached deeper than where it was first decoded still counts its own levels")
    func sharedDepth() {
        // Object 1 holds objects 2 and 62. Arrays 2...61 are a chain of 60 levels, first reached at
        // depth 2 (deepest 61: allowed). Arrays 62...65 wrap object 2 again, which they reach at depth 6.
        var objects: [String] = []
        let classNumber = 66
        objects.append(X.object(classNumber: classNumber, [("NS.objects", X.references([2, 62]))]))  // 1
        for index in 2...61 { objects.append(X.object(classNumber: classNumber, [("NS.objects", X.references(index < 61 ? [index + 1] : []))])) }
        objects.append(X.object(classNumber: classNumber, [("NS.objects", X.references([63]))]))  // 62
        objects.append(X.object(classNumber: classNumber, [("NS.objects", X.references([64]))]))  // 63
        objects.append(X.object(classNumber: classNumber, [("NS.objects", X.references([65]))]))  // 64
        objects.append(X.object(classNumber: classNumber, [("NS.objects", X.references([2]))]))  // 65
        objects.append(X.classDescription("NSArray"))  // 66
        // Through 62...65 the chain 2...61 (60 levels) sits below 5 levels: 65 in all.
        #expect(Self.rejection(X.archive(objects))?.code == .archiveTooDeep)
    }

    @Test("a million objects, written compactly in binary, are refused before any is decoded")
    func millionObjects() {
        var writer = BinaryPlistWriter(referenceSize: 1)
        let root = writer.add([])  // 0: the top dictionary, filled in below
        let keys = ["$archiver", "$version", "$objects", "$top"].map { writer.add(BinaryPlistWriter.ascii($0)) }
        let archiver = writer.add(BinaryPlistWriter.ascii("NSKeyedArchiver"))
        let version = writer.add(BinaryPlistWriter.integer(100_000))
        let null = writer.add(BinaryPlistWriter.ascii("$null"))
        let rootKey = writer.add(BinaryPlistWriter.ascii("root"))
        let rootUID = writer.add(BinaryPlistWriter.uid(0))
        let top = writer.add(writer.dictionary([(rootKey, rootUID)]))
        let objects = writer.add(writer.array(Array(repeating: null, count: 1_000_000)))
        writer.objects[root] = writer.dictionary([(keys[0], archiver), (keys[1], version), (keys[2], objects), (keys[3], top)])
        let bytes = writer.bytes(top: root)
        #expect(bytes.count < 1_100_000)
        let error = Self.rejection(bytes)
        #expect(error?.code == .archiveTooLarge)
        #expect(error?.location.pointer == JSONPointer(["$objects"]))
        // The same file with a limit above a million is a valid archive whose root is $null.
        var limits = KeyedArchiveReader.Limits()
        limits.maximumObjects = 1_000_000
        #expect(Self.rejection(bytes, KeyedArchiveReader(limits: limits)) == nil)
    }

    @Test("a class not on the allow-list is refused at its $class, and allowed once the caller names it")
    func classNotAllowed() throws {
        let bytes = X.archive([X.object(classNumber: 2, [("secret", "<integer>1</integer>")]), X.classDescription("NSSecretThing")])
        let error = Self.rejection(bytes)
        #expect(error?.code == .archiveClassNotAllowed)
        #expect(error?.location.pointer == JSONPointer(["$objects", "1", "$class"]))
        let reader = KeyedArchiveReader(classes: ArchiveClasses(keyedClasses: ["NSSecretThing": []]))
        let value = try reader.read(bytes).root
        #expect(value?[member: "secret"] == .integer(1))
    }

    @Test("an archive without $top is not a keyed archive, located at /$top")
    func missingTop() {
        let error = Self.rejection(X.archive(["<string>x</string>"], top: nil))
        #expect(error?.code == .archiveNotKeyedArchive)
        #expect(error?.location.pointer == JSONPointer(["$top"]))
    }

    @Test("$archiver, $version and $objects[0] are checked")
    func header() {
        #expect(Self.rejection(X.archive(["<string>x</string>"], archiver: "NSArchiver"))?.location.pointer == JSONPointer(["$archiver"]))
        #expect(Self.rejection(X.archive(["<string>x</string>"], version: "<integer>99999</integer>"))?.location.pointer == JSONPointer(["$version"]))
        #expect(Self.rejection(X.archive(["<string>x</string>"]))?.code == nil)
    }

    @Test("a reference beyond $objects is out of range, located at the referring member")
    func referenceOutOfRange() {
        let bytes = X.archive([X.object(classNumber: 2, [("NS.objects", X.references([7]))]), X.classDescription("NSArray")])
        let error = Self.rejection(bytes)
        #expect(error?.code == .archiveReferenceOutOfRange)
        #expect(error?.location.pointer == JSONPointer(["$objects", "1", "NS.objects", "0"]))
        #expect(Self.rejection(X.archive(["<string>x</string>"], top: "<dict><key>root</key>\(X.uid(2))</dict>"))?.code == .archiveReferenceOutOfRange)
    }

    @Test("shared references that double at every level are refused by the value budget")
    func exponentialSharing() {
        // Object i holds object i + 1 twice, 40 levels: 2^40 values in the tree, 40 objects in the file.
        var objects: [String] = []
        for index in 1...40 { objects.append(X.object(classNumber: 42, [("NS.objects", X.references(index < 40 ? [index + 1, index + 1] : []))])) }
        objects.append("<string>unused</string>")
        objects.append(X.classDescription("NSArray"))
        let error = Self.rejection(X.archive(objects))
        #expect(error?.code == .archiveTooLarge)
    }

    @Test("malformed objects of allowed classes are invalid objects at the member")
    func invalidObjects() {
        let cases: [(String, [String])] = [
            ("NS.keys", [X.object(classNumber: 2, [("NS.objects", X.references([]))]), X.classDescription("NSDictionary")]),
            ("NS.uuidbytes", [X.object(classNumber: 2, [("NS.uuidbytes", "<data>AAE=</data>")]), X.classDescription("NSUUID")]),
            ("NS.time", [X.object(classNumber: 2, [("NS.time", "<string>soon</string>")]), X.classDescription("NSDate")]),
        ]
        for (member, objects) in cases {
            let error = Self.rejection(X.archive(objects))
            #expect(error?.code == .archiveInvalidObject, "\(member)")
            #expect(error?.location.pointer == JSONPointer(["$objects", "1", member]), "\(member)")
        }
        let badClass = X.archive([X.object(classNumber: 2, []), "<string>not a class</string>"])
        #expect(Self.rejection(badClass)?.code == .archiveInvalidClass)
    }

    @Test("bytes that are not a property list, or an XML list that declares entities, are refused")
    func notPropertyLists() {
        #expect(Self.rejection([0xFF, 0x00, 0x13, 0x3C])?.code == .archiveNotPropertyList)
        let entities = Array("<?xml version=\"1.0\"?><!DOCTYPE plist [<!ENTITY a \"b\">]><plist><dict/></plist>".utf8)
        #expect(Self.rejection(entities)?.code == .archiveNotPropertyList)
        var writer = BinaryPlistWriter(referenceSize: 1)
        writer.add(BinaryPlistWriter.ascii("x"))
        let truncated = Array(writer.bytes(top: 0).dropLast(3))
        #expect(Self.rejection(truncated)?.code == .archiveNotPropertyList)
        // A binary array that contains itself.
        var cyclic = BinaryPlistWriter(referenceSize: 1)
        cyclic.add(cyclic.array([0]))
        #expect(Self.rejection(cyclic.bytes(top: 0))?.code == .archiveNotPropertyList)
        // Another binary version: refused by its magic, never handed to Foundation.
        var other = writer.bytes(top: 0)
        other[7] = UInt8(ascii: "1")
        #expect(Self.rejection(other)?.code == .archiveNotPropertyList)
        #expect(Self.rejection(other)?.location.offset == 0)
        var limits = KeyedArchiveReader.Limits()
        limits.maximumBytes = 10
        #expect(Self.rejection(X.archive([]), KeyedArchiveReader(limits: limits))?.code == .archiveTooLarge)
    }
}
