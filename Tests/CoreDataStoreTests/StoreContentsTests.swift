import CoreDataStore
import DataModel
import Foundation
import JSONDocument
import SQLiteConnection
import Testing

/// A store written here by hand, table by table, following the rules of Spec/device-state.md 2,
/// read with its model. The expected rows were worked out by hand from the inserts below.
@Suite("Core Data store contents read with a model")
struct StoreContentsTests {
    static let modelXML = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" minimumToolsVersion="Xcode 4.3" sourceLanguage="Objective-C">
            <entity name="Canvas" syncable="YES">
                <attribute name="title" optional="YES" attributeType="String" syncable="YES"/>
                <attribute name="scratch" optional="YES" transient="YES" attributeType="String" syncable="YES"/>
                <relationship name="cover" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Shape" syncable="YES"/>
                <relationship name="shapes" optional="YES" toMany="YES" ordered="YES" deletionRule="Cascade" destinationEntity="Shape" inverseName="canvas" inverseEntity="Shape" syncable="YES"/>
            </entity>
            <entity name="Circle" parentEntity="Shape" syncable="YES">
                <attribute name="radius" optional="YES" attributeType="Double" defaultValueString="0.0" syncable="YES"/>
            </entity>
            <entity name="Shape" syncable="YES">
                <attribute name="name" optional="YES" attributeType="String" syncable="YES"/>
                <relationship name="canvas" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Canvas" inverseName="shapes" inverseEntity="Canvas" syncable="YES"/>
                <relationship name="tags" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Tag" inverseName="shapes" inverseEntity="Tag" syncable="YES"/>
            </entity>
            <entity name="Tag" syncable="YES">
                <attribute name="label" optional="YES" attributeType="String" syncable="YES"/>
                <relationship name="shapes" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Shape" inverseName="tags" inverseEntity="Shape" syncable="YES"/>
            </entity>
        </model>
        """

    static func model() throws -> DataModel {
        try ModelXMLReader.parse(Data(modelXML.utf8), displayPath: "test", versionName: nil)
    }

    /// Entity numbers by the rule: roots Canvas, Shape, Tag in name order, Circle right after Shape.
    static let schema = """
        CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER);
        INSERT INTO Z_PRIMARYKEY VALUES (1, 'Canvas', 0, 1), (2, 'Shape', 0, 3), (3, 'Circle', 2, 0), (4, 'Tag', 0, 3);
        CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB);
        INSERT INTO Z_METADATA VALUES (1, 'TEST-UUID', x'');
        CREATE TABLE ZCANVAS (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCOVER INTEGER, Z2_COVER INTEGER, ZTITLE VARCHAR);
        CREATE TABLE ZSHAPE (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCANVAS INTEGER, Z_FOK_CANVAS INTEGER, ZRADIUS FLOAT, ZNAME VARCHAR);
        CREATE TABLE ZTAG (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZLABEL VARCHAR);
        CREATE TABLE Z_2TAGS (Z_2SHAPES INTEGER, Z_4TAGS INTEGER, PRIMARY KEY (Z_2SHAPES, Z_4TAGS));
        INSERT INTO ZCANVAS VALUES (1, 1, 1, 2, 3, 'Home');
        INSERT INTO ZSHAPE VALUES (1, 2, 1, 1, 2, NULL, 'square'), (2, 3, 1, 1, 1, 1.5, 'disc'), (3, 2, 1, NULL, NULL, NULL, 'loose');
        INSERT INTO ZTAG VALUES (1, 4, 1, 'red'), (2, 4, 1, 'blue');
        INSERT INTO Z_2TAGS VALUES (1, 1), (2, 1), (2, 2);
        """

    /// Written after the last checkpoint, so only the `-wal` file holds them.
    static let walOnly = """
        INSERT INTO ZTAG VALUES (3, 4, 1, 'green');
        INSERT INTO Z_2TAGS VALUES (3, 3);
        UPDATE ZCANVAS SET ZTITLE = 'Home 2', Z_OPT = 2 WHERE Z_PK = 1;
        """

    static func folder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("store-contents-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
        return url
    }

    /// Every file of the folder with its bytes.
    static func snapshot(_ folder: URL) throws -> [String: Data] {
        var result: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            result[name] = try Data(contentsOf: folder.appendingPathComponent(name))
        }
        return result
    }

    static func id(_ entity: String, _ key: Int64) -> CoreDataObjectID { CoreDataObjectID(entity: entity, primaryKey: key) }

    @Test("the layout of the model: tables, columns and the join table, by the rules")
    func layout() throws {
        let layout = try CoreDataLayout(model: Self.model(), numbers: ["Canvas": 1, "Shape": 2, "Circle": 3, "Tag": 4])
        #expect(
            CoreDataLayout.entityNumbers(parents: ["Canvas": nil, "Shape": nil, "Circle": "Shape", "Tag": nil]) == [
                "Canvas": 1, "Shape": 2, "Circle": 3, "Tag": 4,
            ])
        #expect(layout.entities["Circle"]?.table == "ZSHAPE")
        #expect(layout.entities["Shape"]?.kinds == [2, 3])
        #expect(layout.columns["ZCANVAS"]?.map(\.name).sorted() == ["Z2_COVER", "ZCOVER", "ZTITLE"])
        #expect(layout.columns["ZSHAPE"]?.map(\.name).sorted() == ["ZCANVAS", "ZNAME", "ZRADIUS", "Z_FOK_CANVAS"])
        #expect(layout.columns["ZTAG"]?.map(\.name) == ["ZLABEL"])
        #expect(layout.joinTables.map(\.candidateNames) == [["Z_2TAGS"]])
        #expect(layout.joinTables.first?.sourceColumn == "Z_2SHAPES")
        #expect(layout.joinTables.first?.destinationColumn == "Z_4TAGS")
    }

    @Test("a WAL store is read with its newest rows, and its folder is byte for byte the same afterwards")
    func walStore() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("events.sqlite").path
        let writer = try Connection(path: path)
        defer { writer.close() }
        try writer.execute("PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0;")
        try writer.execute(Self.schema)
        try writer.execute("PRAGMA wal_checkpoint(TRUNCATE);")
        try writer.execute(Self.walOnly)
        // The writer stays open: the last rows are in events.sqlite-wal only.
        let walSize = (try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
        #expect(walSize > 0)
        let before = try Self.snapshot(folder)

        let contents = try CoreDataStoreContents.read(path: path, model: Self.model())

        #expect(try Self.snapshot(folder) == before)
        let canvas = try #require(contents.rows["Canvas"]?.first)
        #expect(canvas.id == Self.id("Canvas", 1))
        #expect(canvas.version == 2)
        if case .text(let title)? = canvas.attributes["title"] {
            #expect(title == "Home 2")
        } else {
            Issue.record("title: \(String(describing: canvas.attributes["title"]))")
        }
        #expect(canvas.attributes["scratch"] == nil)
        #expect(canvas.toOne == ["cover": Self.id("Circle", 2)])
        // Ordered by Z_FOK_CANVAS: the disc (1) before the square (2).
        #expect(canvas.toMany == ["shapes": [Self.id("Circle", 2), Self.id("Shape", 1)]])

        #expect(contents.rows["Shape"]?.map(\.id) == [Self.id("Shape", 1), Self.id("Shape", 3)])
        let circle = try #require(contents.rows["Circle"]?.first)
        if case .real(let radius)? = circle.attributes["radius"] { #expect(radius == 1.5) } else { Issue.record("radius") }
        #expect(circle.toOne == ["canvas": Self.id("Canvas", 1)])
        #expect(circle.toMany == ["tags": [Self.id("Tag", 1), Self.id("Tag", 2)]])
        let loose = try #require(contents.rows["Shape"]?.last)
        #expect(loose.toOne.isEmpty)
        #expect(loose.toMany == ["tags": [Self.id("Tag", 3)]])
        #expect(loose.attributes["radius"] == nil, "a Shape has no radius")
        #expect(contents.rows["Tag"]?.map(\.id.primaryKey) == [1, 2, 3])
        #expect(contents.rows["Tag"]?.first?.toMany == ["shapes": [Self.id("Circle", 2), Self.id("Shape", 1)]])
        #expect(contents.rows["Tag"]?.last?.toMany == ["shapes": [Self.id("Shape", 3)]])
    }

    static func rejection(_ schema: String) throws -> FormatError? {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("store.sqlite").path
        let writer = try Connection(path: path)
        try writer.execute(schema)
        writer.close()
        let model = try Self.model()
        do throws(FormatError) {
            _ = try CoreDataStoreContents.read(path: path, model: model)
            return nil
        } catch {
            return error
        }
    }

    @Test("a to-one key to no row is a dangling reference at its table, row and column")
    func danglingReference() throws {
        let error = try Self.rejection(Self.schema + "UPDATE ZSHAPE SET ZCANVAS = 9 WHERE Z_PK = 1;")
        #expect(error?.code == .coreDataDanglingReference)
        #expect(error?.location.pointer == JSONPointer(["ZSHAPE", "1", "ZCANVAS"]))
        // Z2_COVER names Shape (2) while row 2 is a Circle (3).
        #expect(try Self.rejection(Self.schema + "UPDATE ZCANVAS SET Z2_COVER = 2;")?.code == .coreDataDanglingReference)
        #expect(try Self.rejection(Self.schema + "INSERT INTO Z_2TAGS VALUES (7, 1);")?.code == .coreDataDanglingReference)
        #expect(try Self.rejection(Self.schema + "UPDATE ZTAG SET Z_ENT = 2 WHERE Z_PK = 1;")?.code == .coreDataDanglingReference)
    }

    @Test("a missing table or column is a layout mismatch naming it")
    func layoutMismatch() throws {
        let withoutColumn = Self.schema.replacingOccurrences(of: "Z_FOK_CANVAS INTEGER, ", with: "").replacingOccurrences(
            of: "1, 2, NULL, 'square'", with: "1, NULL, 'square'"
        )
        .replacingOccurrences(of: "1, 1, 1.5, 'disc'", with: "1, 1.5, 'disc'").replacingOccurrences(
            of: "NULL, NULL, NULL, 'loose'", with: "NULL, NULL, 'loose'")
        let error = try Self.rejection(withoutColumn)
        #expect(error?.code == .coreDataLayoutMismatch)
        #expect(error?.location.pointer == JSONPointer(["ZSHAPE", "Z_FOK_CANVAS"]))
        let withoutJoin = Self.schema.replacingOccurrences(of: "Z_2TAGS", with: "Z_9OTHER")
        #expect(try Self.rejection(withoutJoin)?.code == .coreDataLayoutMismatch)
    }

    @Test("a store with more rows than the reader holds is refused before a row is read, at its largest table")
    func tooManyRows() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("store.sqlite").path
        let writer = try Connection(path: path)
        try writer.execute(Self.schema)
        // The rows of the tables the model reads, counted here with SQL.
        var counts: [String: Int] = [:]
        for table in ["ZCANVAS", "ZSHAPE", "ZTAG", "Z_2TAGS"] {
            let count = try writer.prepare("SELECT count(*) FROM \(table)")
            if try count.step() { counts[table] = Int(count.int64(0)) }
        }
        writer.close()
        let total = counts.values.reduce(0, +)
        let model = try Self.model()
        #expect(try CoreDataStoreContents.read(path: path, model: model, maximumRows: total).rows["Tag"]?.count == 2)
        do throws(FormatError) {
            _ = try CoreDataStoreContents.read(path: path, model: model, maximumRows: total - 1)
            Issue.record("a store over the limit was read")
        } catch {
            #expect(error.code == .coreDataTooManyRows)
            let largest = counts.values.max() ?? 0
            #expect(counts.filter { $0.value == largest }.keys.map { JSONPointer([$0]) }.contains(error.location.pointer ?? .root))
        }
    }

    @Test("a symbolic link to a store is refused, not followed")
    func symbolicLink() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("store.sqlite").path
        let writer = try Connection(path: path)
        try writer.execute(Self.schema)
        writer.close()
        let link = folder.appendingPathComponent("link.sqlite").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: path)
        let model = try Self.model()
        do throws(FormatError) {
            _ = try CoreDataStoreContents.read(path: link, model: model)
            Issue.record("a link was read")
        } catch {
            #expect(error.code == .coreDataUnreadableStore)
        }
        #expect(try CoreDataStoreContents.read(path: path, model: model).rows["Tag"]?.count == 2)
    }
}
