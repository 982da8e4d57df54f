import EnsembleModel

/// An event large enough that the encoders write it in several pieces on several threads
/// (`Pieces` in ParallelWork), shaped so that the places a joined output can go wrong fall on
/// piece boundaries: the changes come shuffled, entity `B`'s list starts right after the first
/// 2,048 entries of the changes section (an entity's name, then its changes), entity `C`'s
/// right after 4,096 (the JSON writer's pieces and batches, the binary writer's pieces), and
/// there are more than 8,192 changes (the binary string table's pieces). Identifiers, names,
/// values and data files repeat within and across pieces. The binary string table's last two runs
/// are merged in parts (two; five with `lastEntity` 14,000, both runs long).
package enum PiecedEvent {
    package static func make(seed: UInt64 = 9, lastEntity: Int = 5_000) -> Event {
        var random = SplitMix64(seed: seed)
        var changes: [ObjectChange] = []
        var ids: [String] = []
        for (entity, count) in [("A", 2_047), ("B", 2_047), ("C", lastEntity)] {
            for number in 0..<count {
                let id = "\(entity)-\(random.next() % 50)-\(number)"
                let earlier = (0..<3).compactMap { _ in ids.isEmpty ? nil : ids[Int(random.next() % UInt64(ids.count))] }
                var properties = [
                    PropertyChange(name: "title", value: .attribute(.string("text \(number % 300)"))),
                    PropertyChange(name: "size", value: .attribute(.integer(Int64(number) - 1_000))),
                    PropertyChange(name: "tags", value: .toMany(added: earlier, removed: [])),
                    PropertyChange(name: "parent", value: .toOne(relatedIdentifier: earlier.first)),
                ]
                if number % 7 == 0 { properties.append(PropertyChange(name: "blob", value: .attributeInDataFile(filename: "blob-\(number % 40)"))) }
                if number % 11 == 0 {
                    properties.append(
                        PropertyChange(
                            name: "order",
                            value: .orderedToMany(
                                added: earlier, removed: [],
                                movedByIndex: Dictionary(uniqueKeysWithValues: earlier.enumerated().map { ($0.offset, $0.element) }))))
                }
                changes.append(
                    ObjectChange(
                        entity: entity, globalIdentifier: id, type: .insert, propertyChanges: properties,
                        dataFiles: number % 13 == 0 ? ["file-\(number % 5)"] : []))
                ids.append(id)
            }
        }
        return Event(
            uniqueIdentifier: "pieced", type: .baseline, storeIdentifier: "S", revision: 1, globalCount: 40, timestamp: 12.5,
            otherStoreRevisions: ["T": 3], objectChanges: changes.shuffled(using: &random))
    }
}
