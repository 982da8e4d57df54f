import JSONDocument
import EnsembleModel

/// A property change's value as the binary reader checks it: strings as positions in the
/// file's string table (Spec/v2-binary.md 8.3).
enum ReadValue {
    case attribute(AttributeValue)
    case dataFile(Int)
    case toOne(Int?)
    case toMany(added: [Int], removed: [Int])
    /// The moved members by ascending position.
    case orderedToMany(added: [Int], removed: [Int], moved: [(position: Int, identifier: Int)])
}

/// What the binary reader builds from the object changes it has checked (Spec/v2-binary.md 8):
/// one reader, whose checks are the same whatever it builds. Strings are positions in `strings`,
/// the file's table; calls come change by change: ``beginChange(propertyCount:)``, each property
/// in order, then ``endChange(entity:identifier:type:dataFiles:)``.
protocol DecodedChanges {
    init(strings: [String])
    mutating func beginChange(propertyCount: Int)
    mutating func property(name: Int, _ value: ReadValue)
    mutating func endChange(entity: Int, identifier: Int, type: ChangeType, dataFiles: [Int])
}

/// The changes as an ``Event`` holds them.
struct EventChanges: DecodedChanges {
    private let strings: [String]
    private(set) var changes: [ObjectChange] = []
    private var properties: [PropertyChange] = []

    init(strings: [String]) { self.strings = strings }

    mutating func beginChange(propertyCount: Int) { properties.reserveCapacity(propertyCount) }

    mutating func property(name: Int, _ value: ReadValue) {
        let strings = strings
        func named(_ positions: [Int]) -> [String] { positions.map { strings[$0] } }
        let resolved: PropertyChange.Value =
            switch value {
            case .attribute(let attribute): .attribute(attribute)
            case .dataFile(let file): .attributeInDataFile(filename: strings[file])
            case .toOne(let related): .toOne(relatedIdentifier: related.map { strings[$0] })
            case .toMany(let added, let removed): .toMany(added: named(added), removed: named(removed))
            case .orderedToMany(let added, let removed, let moved):
                .orderedToMany(
                    added: named(added), removed: named(removed),
                    movedByIndex: Dictionary(moved.map { ($0.position, strings[$0.identifier]) }, uniquingKeysWith: { first, _ in first }))
            }
        properties.append(PropertyChange(name: strings[name], sortedValue: resolved))
    }

    mutating func endChange(entity: Int, identifier: Int, type: ChangeType, dataFiles: [Int]) {
        changes.append(
            ObjectChange(
                entity: strings[entity], globalIdentifier: strings[identifier], type: type, sortedPropertyChanges: properties,
                sortedDataFiles: dataFiles.map { strings[$0] }))
        properties = []
    }
}

/// The changes in numbered form, numbered as the file's string table is: the table's strings
/// are the event's, in the same order.
struct NumberedChanges: DecodedChanges {
    private(set) var event = NumberedEvent()

    init(strings: [String]) {
        for string in strings { _ = ExactString.withUTF8(of: string) { event.append($0) } }
    }

    func beginChange(propertyCount: Int) {}

    mutating func property(name: Int, _ value: ReadValue) {
        let name = Int32(truncatingIfNeeded: name)
        func numbers(_ positions: [Int]) -> [Int32] { positions.map { Int32(truncatingIfNeeded: $0) } }
        switch value {
        case .attribute(let attribute):
            event.addAttribute(name: name, attribute)
        case .dataFile(let file):
            event.addDataFile(name: name, Int32(truncatingIfNeeded: file))
        case .toOne(let related):
            event.addToOne(name: name, related.map { Int32(truncatingIfNeeded: $0) })
        case .toMany(let added, let removed):
            event.addRelationship(name: name, ordered: false, added: numbers(added), removed: numbers(removed), moved: [])
        case .orderedToMany(let added, let removed, let moved):
            event.addRelationship(
                name: name, ordered: true, added: numbers(added), removed: numbers(removed),
                moved: moved.map { NumberedEvent.Move(position: Int32(truncatingIfNeeded: $0.position), identifier: Int32(truncatingIfNeeded: $0.identifier)) })
        }
    }

    mutating func endChange(entity: Int, identifier: Int, type: ChangeType, dataFiles: [Int]) {
        event.addChange(
            entity: Int32(truncatingIfNeeded: entity), identifier: Int32(truncatingIfNeeded: identifier), type: type,
            dataFiles: dataFiles.isEmpty ? [] : dataFiles.map { Int32(truncatingIfNeeded: $0) })
    }
}

/// Both at once, in one pass over the file.
struct BothChanges: DecodedChanges {
    private(set) var whole: EventChanges
    private(set) var numbered: NumberedChanges

    init(strings: [String]) {
        whole = EventChanges(strings: strings)
        numbered = NumberedChanges(strings: strings)
    }

    mutating func beginChange(propertyCount: Int) {
        whole.beginChange(propertyCount: propertyCount)
        numbered.beginChange(propertyCount: propertyCount)
    }

    mutating func property(name: Int, _ value: ReadValue) {
        whole.property(name: name, value)
        numbered.property(name: name, value)
    }

    mutating func endChange(entity: Int, identifier: Int, type: ChangeType, dataFiles: [Int]) {
        whole.endChange(entity: entity, identifier: identifier, type: type, dataFiles: dataFiles)
        numbered.endChange(entity: entity, identifier: identifier, type: type, dataFiles: dataFiles)
    }
}
