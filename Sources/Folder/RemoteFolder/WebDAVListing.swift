import Foundation
import JSONDocument
import XMLInput

#if canImport(FoundationNetworking)
import FoundationNetworking
import FoundationXML
#endif

extension FormatError.Code {
    /// A PROPFIND answer that is not a multistatus document the toolkit can read, or is larger
    /// than its bounds (Spec/remote.md 3).
    package static let remoteMalformedListing = Self("remote.malformed-listing")
}

/// A listing's XML is parsed by Foundation's `XMLParser` only once ``XMLInput/problem(_:)``
/// finds nothing in it (Spec/remote.md 3).
enum XMLListingInput {
    /// Parses `data` with `delegate` through Foundation's `XMLParser` once ``XMLInput/problem(_:)`` finds
    /// nothing, namespaces processed and external entities never resolved: whether the document
    /// was well-formed, and the line the parser stopped at. Input the parser may not see is
    /// `remote.malformed-listing` at its first byte at fault, worded as `what` (for example "the
    /// PROPFIND answer is no multistatus document") followed by "the toolkit reads" and why.
    static func parse(_ data: Data, delegate: XMLParserDelegate, what: String) throws(FormatError) -> (parsed: Bool, line: Int) {
        if let problem = XMLInput.problem(data) {
            throw FormatError(.remoteMalformedListing, "\(what) the toolkit reads: \(problem.reason)", location: .init(offset: problem.offset))
        }
        let parser = XMLParser(data: data)
        parser.shouldProcessNamespaces = true
        parser.shouldResolveExternalEntities = false
        parser.delegate = delegate
        let parsed = parser.parse()
        return (parsed, parser.lineNumber)
    }
}

/// One member of a WebDAV collection as a PROPFIND `Depth: 1` answer gives it (RFC 4918 9.1).
package struct WebDAVMember: Sendable, Equatable {
    /// The `href`, percent-encoded, as the server wrote it.
    var href: String
    var isCollection: Bool
    /// `getcontentlength`.
    var size: Int64?
    /// `getetag`, as sent (quotes included).
    var etag: String?
    /// `getlastmodified` (an HTTP date, whole seconds).
    var modified: Date?
}

/// The multistatus document of a PROPFIND answer, read with Foundation's `XMLParser` (libxml2),
/// the parser the toolkit already uses for data models; external entities are not resolved.
/// Bounded: the caller limits the document's size, and this reader the number of members.
package enum MultistatusReader {
    /// The body sent with every PROPFIND: the four properties the toolkit keeps.
    static let request = Data(
        """
        <?xml version="1.0" encoding="utf-8"?>
        <D:propfind xmlns:D="DAV:"><D:prop><D:resourcetype/><D:getcontentlength/><D:getetag/><D:getlastmodified/></D:prop></D:propfind>
        """.utf8)

    /// Reads `data`; more than `maximumMembers` members is an error, as is a document that is
    /// not well-formed or not a `DAV:` multistatus.
    package static func read(_ data: Data, maximumMembers: Int) throws(FormatError) -> [WebDAVMember] {
        let collector = Collector(maximumMembers: maximumMembers)
        let (parsed, line) = try XMLListingInput.parse(data, delegate: collector, what: "the PROPFIND answer is no multistatus document")
        if collector.tooMany {
            throw FormatError(.remoteMalformedListing, "the listing holds more than \(maximumMembers) members, the limit of one folder")
        }
        guard parsed, collector.sawMultistatus, collector.closedMultistatus else {
            throw FormatError(.remoteMalformedListing, "the PROPFIND answer is not a DAV: multistatus document (XML error near line \(line))")
        }
        return collector.members
    }

    /// An HTTP date (RFC 9110 5.6.7): IMF-fixdate, and the obsolete RFC 850 and asctime forms.
    package static func date(_ text: String) -> Date? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let date = imfFixdate(trimmed) { return date }
        // The obsolete forms (RFC 850, asctime) and a zone other than GMT, which servers rarely send.
        for format in ["EEEE, dd-MMM-yy HH:mm:ss 'GMT'", "EEE MMM d HH:mm:ss yyyy", "EEE, dd MMM yyyy HH:mm:ss zzz"] {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            if let date = formatter.date(from: trimmed) { return date }
        }
        return nil
    }

    /// IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the form servers send, read by hand: a
    /// DateFormatter made per date was most of the time of a fetch with nothing to download,
    /// Foundation on Linux has no HTTP date style, and its ISO 8601 style accepts 31 November.
    package static func imfFixdate(_ text: String) -> Date? {
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let fields = text.split(separator: " ", omittingEmptySubsequences: false)
        guard fields.count == 6, fields[0].count == 4, fields[0].hasSuffix(","), fields[5] == "GMT", let month = months.firstIndex(of: String(fields[2]))
        else { return nil }
        func number(_ field: Substring, digits: Int) -> Int? {
            guard field.count == digits, field.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
            return Int(field)
        }
        let time = fields[4].split(separator: ":", omittingEmptySubsequences: false)
        guard let day = number(fields[1], digits: 2), let year = number(fields[3], digits: 4), time.count == 3,
            let hour = number(time[0], digits: 2), let minute = number(time[1], digits: 2), let second = number(time[2], digits: 2)
        else { return nil }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let monthDays = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard (1...monthDays[month]).contains(day), hour < 24, minute < 60, second < 60 else { return nil }
        // Days since 1970-01-01 of the proleptic Gregorian date (years counted from March, so
        // that the leap day ends a year).
        let y = month < 2 ? year - 1 : year
        let era = y / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * ((month + 10) % 12) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return Date(timeIntervalSince1970: Double(days * 86_400 + hour * 3_600 + minute * 60 + second))
    }

    private final class Collector: NSObject, XMLParserDelegate {
        let maximumMembers: Int
        var members: [WebDAVMember] = []
        var tooMany = false
        var sawMultistatus = false
        /// The document's end was reached: libxml2 through XMLParser may report a document cut
        /// short as parsed.
        var closedMultistatus = false
        private var text = ""
        private var current: WebDAVMember?
        private var inPropstat = false
        private var propstatOK = true
        private var pending = WebDAVMember(href: "", isCollection: false)
        private var path: [String] = []

        init(maximumMembers: Int) { self.maximumMembers = maximumMembers }

        func parser(
            _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName qName: String?,
            attributes attributeDict: [String: String] = [:]
        ) {
            let name = namespaceURI == "DAV:" ? elementName : "?"
            path.append(name)
            text = ""
            switch name {
            case "multistatus" where path.count == 1: sawMultistatus = true
            case "response" where path.count == 2:
                guard members.count < maximumMembers else {
                    tooMany = true
                    parser.abortParsing()
                    return
                }
                current = WebDAVMember(href: "", isCollection: false)
            case "propstat" where current != nil:
                inPropstat = true
                propstatOK = true
                pending = WebDAVMember(href: "", isCollection: false)
            case "collection" where inPropstat && path.dropLast().last == "resourcetype": pending.isCollection = true
            default: break
            }
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            // Property values are short; a huge text is cut (the document's size is bounded too).
            if text.utf8.count < 65536 { text += string }
        }

        func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?) {
            let name = path.popLast() ?? ""
            let value = text.trimmingCharacters(in: .whitespacesAndNewlines)
            switch name {
            case "href" where current != nil && !inPropstat && path.last == "response": current?.href = value
            case "status" where inPropstat:
                let parts = value.split(separator: " ")
                propstatOK = parts.count >= 2 && parts[1].hasPrefix("2")
            case "getcontentlength" where inPropstat: pending.size = Int64(value)
            case "getetag" where inPropstat: pending.etag = value.isEmpty ? nil : value
            case "getlastmodified" where inPropstat: pending.modified = MultistatusReader.date(value)
            case "propstat" where inPropstat:
                inPropstat = false
                if propstatOK, var member = current {
                    member.isCollection = member.isCollection || pending.isCollection
                    member.size = pending.size ?? member.size
                    member.etag = pending.etag ?? member.etag
                    member.modified = pending.modified ?? member.modified
                    current = member
                }
            case "multistatus" where path.isEmpty: closedMultistatus = true
            case "response" where current != nil && path.count == 1:
                if let current, !current.href.isEmpty { members.append(current) }
                current = nil
            default: break
            }
            text = ""
        }
    }
}

extension RemoteSnapshot {
    /// Every file under the collection, by PROPFIND `Depth: 1` on each folder, breadth first
    /// (Spec/remote.md 3); unsafe names are reported, not listed.
    func listWebDAV(_ transport: HTTPTransport, report: inout Report) throws(FormatError) -> ([Entry], [FormatError]) {
        var walk = FolderWalk()
        while let folder = walk.nextFolder() {
            let url = location.url(of: folder, isFolder: true)
            let shown = folder.isEmpty ? "." : folder.joined(separator: "/") + "/"
            let response = try transport.perform(
                .init(
                    method: "PROPFIND", url: url, headers: ["Depth": "1", "Content-Type": "application/xml; charset=utf-8"], body: MultistatusReader.request,
                    sink: .memory, limit: Self.maximumListingBytes), origin: location, file: shown)
            report.listingRequests += 1
            guard response.status == 207 else {
                throw FormatError(.remoteHTTPStatus, "PROPFIND answered \(response.status)\(Self.statusHint(response.status))", location: .init(file: shown))
            }
            let members: [WebDAVMember]
            do { members = try MultistatusReader.read(response.body, maximumMembers: Self.maximumMembersPerFolder) } catch {
                throw error.inFile(shown)
            }
            // Members are named relative to the URL that answered (a folder may redirect on its
            // host); requests still go to URLs built from the folder's own URL.
            let base = RemoteLocation.decodedSegments(response.url.path(percentEncoded: true)) ?? (location.segments + folder)
            for member in members {
                guard let target = URL(string: member.href, relativeTo: response.url)?.absoluteURL,
                    let segments = RemoteLocation.decodedSegments(target.path(percentEncoded: true))
                else {
                    walk.report(FormatError(.remoteUnsafeName, "an href that is not a URL path: \(member.href)", location: .init(file: shown)))
                    continue
                }
                // The folder itself.
                if segments == base { continue }
                guard target.host == nil || location.isSameOrigin(target), segments.count == base.count + 1, Array(segments.prefix(base.count)) == base,
                    let name = segments.last
                else {
                    walk.report(FormatError(.remoteUnsafeName, "a member outside the folder listed: \(member.href)", location: .init(file: shown)))
                    continue
                }
                guard try walk.admit(name, in: folder) else { continue }
                if member.isCollection {
                    walk.addFolder(folder + [name])
                } else {
                    walk.addFile(Entry(path: folder + [name], size: member.size, etag: member.etag, modified: member.modified))
                }
            }
        }
        return (walk.files, walk.problems)
    }
}
