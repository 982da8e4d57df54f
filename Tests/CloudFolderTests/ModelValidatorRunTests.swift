import Foundation
import Testing
import JSONDocument
import EnsembleModel
import DataModel
import ModelValidation

/// The validator asks the model once per run of changes of one entity; pointers still count a
/// change's place among all the changes of its entity, however the runs are split.
@Suite("model validator runs")
struct ModelValidatorRunTests {
    static let model: DataModel? = {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/models/Inheritance.xcdatamodeld").path
        return try? ModelBundle(path: path).load()
    }()

    static func change(_ entity: String, _ properties: [PropertyChange]) -> ObjectChange {
        ObjectChange(entity: entity, globalIdentifier: UUID().uuidString, type: .update, propertyChanges: properties)
    }

    @Test("errors point at the change's index within its entity, across interleaved runs")
    func interleaved() throws {
        let model = try #require(Self.model)
        let good = PropertyChange(name: "body", value: .attribute(.string("x")))
        let unknown = PropertyChange(name: "nonsense", value: .attribute(.string("x")))
        let wrongType = PropertyChange(name: "body", value: .attribute(.integer(3)))
        let changes = [
            Self.change("Note", [good]), Self.change("Photo", [PropertyChange(name: "caption", value: .attribute(.string("c")))]),
            Self.change("Note", [unknown]), Self.change("Note", [unknown, wrongType]), Self.change("Ghost", []), Self.change("Note", [wrongType]),
        ]
        let errors = ModelValidator(model: model).validate(changes)
        #expect(
            errors.map { "\($0.code) \($0.location.pointer?.displayString ?? "-")" } == [
                // Properties are in name order within a change.
                "model.unknown-property /changesByEntity/Note/1", "model.wrong-value-type /changesByEntity/Note/2/value",
                "model.unknown-property /changesByEntity/Note/2", "model.unknown-entity /changesByEntity/Ghost",
                "model.wrong-value-type /changesByEntity/Note/3/value",
            ])
    }
}
