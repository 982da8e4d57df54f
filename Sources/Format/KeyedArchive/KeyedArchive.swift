import Foundation
import JSONDocument

/// A decoded `NSKeyedArchiver` archive: the values named in `$top`, and the values of the objects
/// that links point to (Spec/device-state.md 3).
package struct KeyedArchive: Hashable, Sendable {
    /// `$top`'s entries, decoded, by the keys' bytes (``PropertyListValue``).
    package var top: [ExactString: ArchivedValue]
    /// The decoded value of every object a ``ArchivedValue/link(_:)`` names, by object number.
    package var linked: [Int: ArchivedValue]

    /// `$top`'s `root`, which is what `NSKeyedArchiver`'s root object is archived under.
    package var root: ArchivedValue? { top["root"] }

    /// The value a link points to; any other value as it is.
    package func resolve(_ value: ArchivedValue) -> ArchivedValue {
        guard case .link(let number) = value else { return value }
        return linked[number] ?? .null
    }
}

/// The classes a reader decodes (Spec/device-state.md 3.4). Foundation's value classes are always
/// decoded as themselves; any other class is refused unless it is named here, with the members
/// that are links (kept as object numbers, never followed, so that owner pointers are not cycles).
package struct ArchiveClasses: Hashable, Sendable {
    /// Class name -> the member keys that are links, both by their bytes (device-state.md 3.1): a
    /// name canonically equivalent to an allowed one, such as one spelt with U+212A KELVIN SIGN
    /// for `K`, is another class.
    package var keyedClasses: [ExactString: Set<ExactString>]

    package init(keyedClasses: [String: Set<String>] = [:]) {
        self.keyedClasses = Dictionary(uniqueKeysWithValues: keyedClasses.map { (ExactString($0.key), Set($0.value.map(ExactString.init))) })
    }

    /// Foundation's value classes only.
    package static let foundation = ArchiveClasses()

    /// What Ensembles 1.x archives: Foundation's values and `CDEPropertyChangeValue`.
    package static let ensembles = ArchiveClasses(keyedClasses: ["CDEPropertyChangeValue": []])

    /// Xcode's old model format (an `.xcdatamodel`'s `elements` file): its model, package, entity,
    /// property and stereotype classes. `_owner` and `_xd_owningModel` point back to the
    /// containing element, and a stereotype property's `_default` can name another entity or
    /// relationship (a destination, an inverse): these are links.
    package static let xcodeModel: ArchiveClasses = {
        let owner: Set<String> = ["_owner", "_xd_owningModel"]
        var classes: [String: Set<String>] = [:]
        for name in ["XDPMModel", "XDModelPackage", "XDPMEntity", "XDPMAttribute", "XDPMRelationship", "XDUMLClassImp", "XDUMLStereotypeImp"] {
            classes[name] = owner
        }
        classes["XDUMLPropertyImp"] = owner.union(["_default"])
        return ArchiveClasses(keyedClasses: classes)
    }()

    /// Foundation's classes this reader decodes as values.
    package static let foundationClassNames = Set(
        [
            "NSArray", "NSMutableArray", "NSSet", "NSMutableSet", "NSOrderedSet", "NSMutableOrderedSet", "NSDictionary", "NSMutableDictionary",
            "NSString", "NSMutableString", "NSDate", "NSData", "NSMutableData", "NSNull", "NSUUID", "NSURL",
        ].map(ExactString.init))
}

/// Reads `NSKeyedArchiver` archives from untrusted bytes within limits (Spec/device-state.md 3).
package struct KeyedArchiveReader: Sendable {
    /// Bounds on what one archive may cost (Spec/device-state.md 3.5).
    package struct Limits: Hashable, Sendable {
        /// The property list's size in bytes.
        package var maximumBytes = 16 * 1024 * 1024
        /// Entries of `$objects`.
        package var maximumObjects = 500_000
        /// Values of the decoded tree, each shared object counted every time it is reached.
        package var maximumValues = 2_000_000
        /// Nesting of the property list and of the decoded tree.
        package var maximumDepth = 64

        package init() {}
    }

    package var classes: ArchiveClasses
    package var limits: Limits

    package init(classes: ArchiveClasses = .ensembles, limits: Limits = Limits()) {
        self.classes = classes
        self.limits = limits
    }

    /// Decodes the archive in `bytes`, or throws an `archive.*` error whose location is a byte
    /// offset (property-list errors) or a pointer such as `/$objects/12/NS.objects/3`.
    package func read(_ bytes: [UInt8]) throws(FormatError) -> KeyedArchive {
        let plist = try PropertyListValue.read(bytes, maximumBytes: limits.maximumBytes, maximumDepth: limits.maximumDepth)
        guard case .dictionary(let document) = plist else {
            throw FormatError(.archiveNotKeyedArchive, "the property list is not a dictionary", at: .root)
        }
        guard document["$archiver"] == .string("NSKeyedArchiver") else {
            throw FormatError(.archiveNotKeyedArchive, "$archiver is not \"NSKeyedArchiver\"", at: .root / "$archiver")
        }
        guard document["$version"] == .integer(100_000) else {
            throw FormatError(.archiveNotKeyedArchive, "$version is not 100000", at: .root / "$version")
        }
        guard case .array(let objects) = document["$objects"] else {
            throw FormatError(.archiveNotKeyedArchive, "$objects is missing or not an array", at: .root / "$objects")
        }
        guard objects.count <= limits.maximumObjects else {
            throw FormatError(.archiveTooLarge, "\(objects.count) objects, more than the limit of \(limits.maximumObjects)", at: .root / "$objects")
        }
        guard objects.first == .string("$null") else {
            throw FormatError(.archiveNotKeyedArchive, "$objects does not start with \"$null\"", at: .root / "$objects" / 0)
        }
        guard case .dictionary(let topEntries) = document["$top"] else {
            throw FormatError(.archiveNotKeyedArchive, "$top is missing or not a dictionary", at: .root / "$top")
        }
        var decoder = ArchiveDecoder(objects: objects, classes: classes, limits: limits)
        var top: [ExactString: ArchivedValue] = [:]
        for (key, entry) in topEntries.inUTF8Order {
            let pointer = JSONPointer.root / "$top" / key.value
            guard case .uid(let reference) = entry else {
                throw FormatError(.archiveNotKeyedArchive, "a $top entry that is not a reference", at: pointer)
            }
            top[key] = try decoder.root(reference, from: pointer)
        }
        let linked = try decoder.decodeLinks()
        return KeyedArchive(top: top, linked: linked)
    }
}
