import JSONDocument
import EnsembleModel

extension NumberedEvent {
    /// The changes as values again, every number read back as the string or value it stands for.
    package var resolved: [ObjectChange] {
        changes.map { change in
            ObjectChange(
                entity: string(change.entity), globalIdentifier: string(change.identifier), type: change.type,
                sortedPropertyChanges: properties[Int(change.firstProperty)..<Int(change.endProperty)].map { property in
                    PropertyChange(name: string(property.name), sortedValue: value(of: property))
                }, sortedDataFiles: [])
        }
    }

    /// Whether every ordered to-many's moved members come by ascending position, as the form requires.
    package var movesAscend: Bool {
        properties.allSatisfy { property in
            let moved = moves[Int(property.firstMove)..<Int(property.firstMove + property.moved)]
            return moved.indices.dropFirst().allSatisfy { moved[$0 - 1].position < moved[$0].position }
        }
    }

    private func value(of property: Property) -> PropertyChange.Value {
        func strings(_ start: Int32, _ count: Int32) -> [String] { identifiers[Int(start)..<Int(start + count)].map(string) }
        let added = strings(property.first, property.added), removed = strings(property.first + property.added, property.removed)
        switch property.kind {
        case .attribute: return .attribute(attributes[Int(property.value)])
        case .dataFile: return .attributeInDataFile(filename: string(property.value))
        case .toOne: return .toOne(relatedIdentifier: property.value < 0 ? nil : string(property.value))
        case .toMany: return .toMany(added: added, removed: removed)
        case .orderedToMany:
            let moved = moves[Int(property.firstMove)..<Int(property.firstMove + property.moved)]
            return .orderedToMany(
                added: added, removed: removed,
                movedByIndex: Dictionary(moved.map { (Int($0.position), string($0.identifier)) }, uniquingKeysWith: { first, _ in first }))
        }
    }
}
