import Foundation
import JSONDocument

/// Walks `$objects` from the `$top` references (Spec/device-state.md 3.2 to 3.6). Each object is
/// decoded once and its value shared; an object reached again while it is still being decoded is a
/// cycle. A shared object counts once per path in the value budget and its height counts at every
/// place it is reached, so a small archive of shared references cannot make a tree too large to
/// walk.
struct ArchiveDecoder {
    private struct Decoded {
        var value: ArchivedValue
        /// Values in the tree of `value`, shared ones counted every time.
        var size: Int
        /// Levels of the tree of `value` (1 for a leaf).
        var height: Int
    }

    private let objects: [PropertyListValue]
    private let classes: ArchiveClasses
    private let limits: KeyedArchiveReader.Limits
    private var decoded: [Int: Decoded] = [:]
    private var inProgress: Set<Int> = []
    /// Object numbers of links met so far, to be decoded as roots of their own.
    private var pendingLinks: [Int] = []
    private var linkSeen: Set<Int> = []
    /// Values of every decoded root so far.
    private var total = 0

    init(objects: [PropertyListValue], classes: ArchiveClasses, limits: KeyedArchiveReader.Limits) {
        self.objects = objects
        self.classes = classes
        self.limits = limits
    }

    private static func objectPointer(_ number: Int) -> JSONPointer { .root / "$objects" / number }

    /// Decodes a `$top` entry.
    mutating func root(_ reference: UInt64, from pointer: JSONPointer) throws(FormatError) -> ArchivedValue {
        let result = try follow(reference, from: pointer, depth: 1)
        try count(result.size, at: pointer)
        return result.value
    }

    /// Decodes every object a link names (and the links inside those), each as a root.
    mutating func decodeLinks() throws(FormatError) -> [Int: ArchivedValue] {
        var linked: [Int: ArchivedValue] = [:]
        var index = 0
        while index < pendingLinks.count {
            let number = pendingLinks[index]
            index += 1
            let result = try follow(UInt64(number), from: Self.objectPointer(number), depth: 1)
            try count(result.size, at: Self.objectPointer(number))
            linked[number] = result.value
        }
        return linked
    }

    private mutating func count(_ size: Int, at pointer: JSONPointer) throws(FormatError) {
        total += size
        guard total <= limits.maximumValues else {
            throw FormatError(.archiveTooLarge, "the decoded values exceed the limit of \(limits.maximumValues)", at: pointer)
        }
    }

    private func checked(_ reference: UInt64, from pointer: JSONPointer) throws(FormatError) -> Int {
        guard reference < UInt64(objects.count) else {
            throw FormatError(.archiveReferenceOutOfRange, "a reference to object \(reference) of \(objects.count)", at: pointer)
        }
        return Int(reference)
    }

    /// The value of the object `reference` names, at `depth` of the tree.
    private mutating func follow(_ reference: UInt64, from pointer: JSONPointer, depth: Int) throws(FormatError) -> Decoded {
        let number = try checked(reference, from: pointer)
        if number == 0 { return Decoded(value: .null, size: 1, height: 1) }
        if let done = decoded[number] {
            guard depth + done.height - 1 <= limits.maximumDepth else {
                throw FormatError(.archiveTooDeep, "values nested deeper than \(limits.maximumDepth)", at: Self.objectPointer(number))
            }
            return done
        }
        guard inProgress.insert(number).inserted else {
            throw FormatError(.archiveCycle, "object \(number) contains itself (reached from \(pointer.displayString))", at: Self.objectPointer(number))
        }
        guard depth <= limits.maximumDepth else {
            throw FormatError(.archiveTooDeep, "values nested deeper than \(limits.maximumDepth)", at: Self.objectPointer(number))
        }
        let result = try object(number, depth: depth)
        inProgress.remove(number)
        guard result.size <= limits.maximumValues else {
            throw FormatError(.archiveTooLarge, "the decoded values exceed the limit of \(limits.maximumValues)", at: Self.objectPointer(number))
        }
        decoded[number] = result
        return result
    }

    /// A scalar of the property list as a value; nil for containers and references.
    private static func scalar(_ value: PropertyListValue) -> ArchivedValue? {
        switch value {
        case .bool(let flag): return .bool(flag)
        case .integer(let number): return .integer(number)
        case .real(let number): return .real(number)
        case .date(let seconds): return .date(seconds)
        case .data(let bytes): return .data(bytes)
        case .string(let text): return .string(text)
        case .uid, .array, .dictionary: return nil
        }
    }

    private mutating func object(_ number: Int, depth: Int) throws(FormatError) -> Decoded {
        let pointer = Self.objectPointer(number)
        let entry = objects[number]
        if let value = Self.scalar(entry) { return Decoded(value: value, size: 1, height: 1) }
        guard case .dictionary(let members) = entry else {
            throw FormatError(.archiveInvalidObject, "an entry of $objects that is neither a value nor an object", at: pointer)
        }
        guard case .uid(let classReference) = members["$class"] else {
            throw FormatError(.archiveInvalidObject, "an object without a $class reference", at: pointer)
        }
        let (className, classNames) = try classDescription(classReference, from: pointer / "$class")
        if ArchiveClasses.foundationClassNames.contains(ExactString(className)) {
            return try foundationValue(className, members, at: pointer, depth: depth)
        }
        guard let links = classes.keyedClasses[className] else {
            throw FormatError(.archiveClassNotAllowed, "the class \(className) is not on the allow-list", at: pointer / "$class")
        }
        var values: [ExactString: ArchivedValue] = [:]
        var size = 1, height = 1
        for (exactKey, member) in members.inUTF8Order where exactKey != ExactString("$class") {
            let key = exactKey.value
            let result: Decoded
            if links.contains(exactKey), case .uid(let target) = member {
                let linked = try checked(target, from: pointer / key)
                if linked == 0 {
                    result = Decoded(value: .null, size: 1, height: 1)
                } else {
                    if linkSeen.insert(linked).inserted { pendingLinks.append(linked) }
                    result = Decoded(value: .link(linked), size: 1, height: 1)
                }
            } else {
                result = try inline(member, at: pointer / key, depth: depth + 1)
            }
            values[exactKey] = result.value
            size += result.size
            height = max(height, result.height + 1)
            guard size <= limits.maximumValues else {
                throw FormatError(.archiveTooLarge, "the decoded values exceed the limit of \(limits.maximumValues)", at: pointer / key)
            }
        }
        let value = ArchivedValue.object(ArchivedObject(className: className, classes: classNames, members: values))
        return Decoded(value: value, size: size, height: height)
    }

    /// A member's value as written inside an object: a reference, a scalar or an array of them.
    private mutating func inline(_ member: PropertyListValue, at pointer: JSONPointer, depth: Int) throws(FormatError) -> Decoded {
        if let value = Self.scalar(member) { return Decoded(value: value, size: 1, height: 1) }
        switch member {
        case .uid(let reference):
            return try follow(reference, from: pointer, depth: depth)
        case .array(let elements):
            guard depth <= limits.maximumDepth else {
                throw FormatError(.archiveTooDeep, "values nested deeper than \(limits.maximumDepth)", at: pointer)
            }
            return try collection(elements, at: pointer, depth: depth) { .array($0) }
        default:
            throw FormatError(.archiveInvalidObject, "a member that is a dictionary", at: pointer)
        }
    }

    /// The values of `elements` as one container built by `make`, at `depth`.
    private mutating func collection(
        _ elements: [PropertyListValue], at pointer: JSONPointer, depth: Int, make: ([ArchivedValue]) -> ArchivedValue
    ) throws(FormatError) -> Decoded {
        var values: [ArchivedValue] = []
        values.reserveCapacity(elements.count)
        var size = 1, height = 1
        for (index, element) in elements.enumerated() {
            let result = try inline(element, at: pointer / index, depth: depth + 1)
            values.append(result.value)
            size += result.size
            height = max(height, result.height + 1)
            guard size <= limits.maximumValues else {
                throw FormatError(.archiveTooLarge, "the decoded values exceed the limit of \(limits.maximumValues)", at: pointer / index)
            }
        }
        return Decoded(value: make(values), size: size, height: height)
    }

    /// `$classname` and `$classes` of the class description `reference` names.
    private func classDescription(_ reference: UInt64, from pointer: JSONPointer) throws(FormatError) -> (String, [String]) {
        let number = try checked(reference, from: pointer)
        guard case .dictionary(let description) = objects[number], case .string(let name) = description["$classname"] else {
            throw FormatError(.archiveInvalidClass, "$class does not name a class description with a $classname", at: pointer)
        }
        var names: [String] = []
        switch description["$classes"] {
        case nil: names = [name]
        case .array(let list)?:
            for entry in list {
                guard case .string(let text) = entry else {
                    throw FormatError(.archiveInvalidClass, "$classes holds something other than names", at: Self.objectPointer(number) / "$classes")
                }
                names.append(text)
            }
        default:
            throw FormatError(.archiveInvalidClass, "$classes is not an array", at: Self.objectPointer(number) / "$classes")
        }
        return (name, names)
    }

    /// The member `key` as an array of references, for `NS.objects` and `NS.keys`.
    private func references(_ members: [ExactString: PropertyListValue], _ key: String, at pointer: JSONPointer) throws(FormatError) -> [PropertyListValue] {
        guard case .array(let list) = members[key] else {
            throw FormatError(.archiveInvalidObject, "\(key) is missing or not an array", at: pointer / key)
        }
        for (index, element) in list.enumerated() {
            guard case .uid = element else {
                throw FormatError(.archiveInvalidObject, "\(key) holds something other than references", at: pointer / key / index)
            }
        }
        return list
    }

    private mutating func foundationValue(
        _ className: String, _ members: [ExactString: PropertyListValue], at pointer: JSONPointer, depth: Int
    ) throws(FormatError) -> Decoded {
        func invalid(_ message: String, _ key: String) -> FormatError {
            FormatError(.archiveInvalidObject, "\(className): \(message)", at: pointer / key)
        }
        switch className {
        case "NSArray", "NSMutableArray":
            return try collection(try references(members, "NS.objects", at: pointer), at: pointer / "NS.objects", depth: depth) { .array($0) }
        case "NSSet", "NSMutableSet":
            return try collection(try references(members, "NS.objects", at: pointer), at: pointer / "NS.objects", depth: depth) { .set($0) }
        case "NSOrderedSet", "NSMutableOrderedSet":
            return try collection(try references(members, "NS.objects", at: pointer), at: pointer / "NS.objects", depth: depth) { .orderedSet($0) }
        case "NSDictionary", "NSMutableDictionary":
            let keys = try references(members, "NS.keys", at: pointer), values = try references(members, "NS.objects", at: pointer)
            guard keys.count == values.count else { throw invalid("\(keys.count) keys for \(values.count) values", "NS.objects") }
            let decodedKeys = try collection(keys, at: pointer / "NS.keys", depth: depth) { .array($0) }
            let decodedValues = try collection(values, at: pointer / "NS.objects", depth: depth) { .array($0) }
            guard case .array(let keyList) = decodedKeys.value, case .array(let valueList) = decodedValues.value else {
                throw invalid("keys and values", "NS.keys")
            }
            let pairs = zip(keyList, valueList).map { ArchivedPair(key: $0, value: $1) }
            // The two lists were counted as containers of their own; the dictionary is one value.
            return Decoded(
                value: .dictionary(pairs), size: decodedKeys.size + decodedValues.size - 1,
                height: max(decodedKeys.height, decodedValues.height))
        case "NSString", "NSMutableString":
            guard case .string(let text) = members["NS.string"] else { throw invalid("NS.string is missing or not a string", "NS.string") }
            return Decoded(value: .string(text), size: 1, height: 1)
        case "NSDate":
            switch members["NS.time"] {
            case .real(let seconds)?: return Decoded(value: .date(seconds), size: 1, height: 1)
            case .integer(let seconds)?: return Decoded(value: .date(Double(seconds)), size: 1, height: 1)
            default: throw invalid("NS.time is missing or not a number", "NS.time")
            }
        case "NSData", "NSMutableData":
            guard case .data(let bytes) = members["NS.data"] else { throw invalid("NS.data is missing or not data", "NS.data") }
            return Decoded(value: .data(bytes), size: 1, height: 1)
        case "NSNull":
            return Decoded(value: .null, size: 1, height: 1)
        case "NSUUID":
            guard case .data(let bytes) = members["NS.uuidbytes"], bytes.count == 16 else {
                throw invalid("NS.uuidbytes is missing or not 16 bytes", "NS.uuidbytes")
            }
            let uuid = UUID(
                uuid: (
                    bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9], bytes[10], bytes[11],
                    bytes[12], bytes[13], bytes[14], bytes[15]
                ))
            return Decoded(value: .uuid(uuid), size: 1, height: 1)
        case "NSURL":
            guard case .uid(let relativeReference) = members["NS.relative"] else { throw invalid("NS.relative is missing or not a reference", "NS.relative") }
            let relative = try follow(relativeReference, from: pointer / "NS.relative", depth: depth + 1)
            guard case .string(let text) = relative.value else { throw invalid("NS.relative is not a string", "NS.relative") }
            var base: Decoded?
            switch members["NS.base"] {
            case nil: base = nil
            case .uid(let baseReference)?:
                let result = try follow(baseReference, from: pointer / "NS.base", depth: depth + 1)
                switch result.value {
                case .null: base = nil
                case .url: base = result
                default: throw invalid("NS.base is not a URL", "NS.base")
                }
            default: throw invalid("NS.base is not a reference", "NS.base")
            }
            return Decoded(
                value: .url(base: base?.value, relative: text), size: 1 + relative.size + (base?.size ?? 0),
                height: 1 + max(relative.height, base?.height ?? 0))
        default:
            throw FormatError(.archiveClassNotAllowed, "the class \(className) is not on the allow-list", at: pointer / "$class")
        }
    }
}
