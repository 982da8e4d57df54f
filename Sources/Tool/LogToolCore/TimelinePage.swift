import Foundation
import EnsemblesToolkit

/// The timeline as one self-contained HTML page (Spec/timeline.md): inline CSS, SVG and script,
/// nothing fetched. The SVG and the tables are written here, so the page reads without
/// JavaScript; the script only adds zoom, pan, the time axis and the detail panel.
enum TimelinePage {
    static let plotLeft = 240.0, plotWidth = 1100.0, laneHeight = 36.0, top = 44.0
    /// Above this many events a lane shows counts per bin rather than one mark per event.
    static let markLimit = 4000
    static let bins = 400
    /// At most this many lanes: above it, the stores after the first `laneLimit - 1` share the
    /// last lane, "+K more stores" (Spec/timeline.md 2).
    static let laneLimit = 50

    static func html(_ reports: [TimelineReport], source: String, asStore: String?) -> String {
        var body = ""
        for report in reports { body += section(report) }
        let counts = reports.flatMap(\.findings).reduce(into: [String: Int]()) { $0[$1.diagnostic.severity.rawValue, default: 0] += 1 }
        return """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
            <title>Timeline of \(escape(source))</title>
            <style>\(css)</style></head>
            <body>
            <header><h1>Timeline of \(escape(source))</h1>
            <p class="summary">\(reports.count) ensemble(s); \(reports.reduce(0) { $0 + $1.lanes.count }) store(s); \
            \(reports.reduce(0) { $0 + $1.marks.count }) event(s) and baseline(s); findings: \(counts["error"] ?? 0) error(s), \
            \(counts["warning"] ?? 0) warning(s), \(counts["info"] ?? 0) info(s)\(asStore.map { "; seen as device \(escape($0))" } ?? "")</p>
            <p class="controls"><button id="axis" type="button">x: global count (switch to time)</button> \
            <button id="reset" type="button">reset zoom</button> <span class="hint">wheel: zoom, drag: pan, click: details</span></p>
            </header>
            \(body)
            <aside id="detail" aria-live="polite"><p>Click an event or a finding for its details.</p></aside>
            \(legend)
            <script>\(script)</script>
            </body></html>

            """
    }

    static func section(_ report: TimelineReport) -> String {
        let shownLanes = min(report.lanes.count, laneLimit)
        let more = report.lanes.count - shownLanes + (report.lanes.count > laneLimit ? 1 : 0)
        let laneIndex = Dictionary(
            report.lanes.enumerated().map { ($1.store, min($0, laneLimit - 1)) }, uniquingKeysWith: { first, _ in first })
        var low = Int64.max, high = Int64.min
        for mark in report.marks {
            low = min(low, mark.globalCount)
            high = max(high, mark.globalCount)
        }
        if report.marks.isEmpty { (low, high) = (0, 1) }
        // In doubles: global counts may be anywhere in 0...2^63-1, where `high - low + 1` overflows.
        let span = max(Double(high) - Double(low), 1)
        if high <= low { high = low == Int64.max ? low : low + 1 }
        func x(_ globalCount: Int64) -> Double { plotLeft + (Double(globalCount) - Double(low)) / span * plotWidth }
        func y(_ store: String) -> Double { top + Double(laneIndex[store] ?? 0) * laneHeight + laneHeight / 2 }
        let height = top + Double(shownLanes) * laneHeight + 40
        var svg =
            "<svg class=\"timeline\" viewBox=\"0 0 \(Int(plotLeft + plotWidth + 40)) \(Int(height))\" role=\"img\" aria-label=\"lanes of stores with their events and findings\">"
        svg += "<text class=\"folder-label\" x=\"8\" y=\"\(Int(top - 18))\">folder</text>"
        for (index, lane) in report.lanes.prefix(shownLanes).enumerated() {
            let laneTop = top + Double(index) * laneHeight
            let shared = more > 0 && index == laneLimit - 1
            svg +=
                shared
                ? "<g class=\"lane more\" data-more=\"\(more)\">"
                : "<g class=\"lane\" data-store=\"\(escape(lane.store))\">"
            svg += "<rect class=\"lane-bg\" x=\"0\" y=\"\(laneTop)\" width=\"\(plotLeft + plotWidth + 40)\" height=\"\(laneHeight)\"/>"
            let label =
                shared ? "+\(more) more stores" : escape(String(lane.store.prefix(lane.registered ? 30 : 18))) + (lane.registered ? "" : " (unregistered)")
            svg += "<text class=\"lane-label\" x=\"8\" y=\"\(laneTop + laneHeight / 2 + 4)\">\(label)</text></g>"
        }
        svg += "<g class=\"marks\">"
        if report.marks.count <= markLimit {
            for (index, mark) in report.marks.enumerated() {
                if mark.spans.isEmpty {
                    svg +=
                        "<circle class=\"mark type-\(mark.type)\" data-i=\"\(index)\" data-store=\"\(escape(mark.store))\" cx=\"\(x(mark.globalCount))\" cy=\"\(y(mark.store))\" r=\"5\"><title>\(escape(mark.file))</title></circle>"
                } else {
                    let rows = mark.spans.compactMap { laneIndex[$0] }
                    let first = Double(rows.min() ?? 0), last = Double(rows.max() ?? 0)
                    svg +=
                        "<rect class=\"mark baseline\" data-i=\"\(index)\" data-store=\"\(escape(mark.store))\" x=\"\(x(mark.globalCount) - 4)\" y=\"\(top + first * laneHeight + 4)\" width=\"8\" height=\"\((last - first + 1) * laneHeight - 8)\"><title>\(escape(mark.file))</title></rect>"
                }
            }
        } else {
            // Many events: how many fall in each bin of each lane, darker for more.
            var tally: [Int: [Int: Int]] = [:]
            for mark in report.marks {
                let bin = Int((Double(mark.globalCount) - Double(low)) / span * Double(bins - 1))
                tally[laneIndex[mark.store] ?? 0, default: [:]][bin, default: 0] += 1
            }
            let most = tally.values.flatMap(\.values).max() ?? 1
            for (row, lane) in tally.sorted(by: { $0.key < $1.key }) {
                for (bin, count) in lane.sorted(by: { $0.key < $1.key }) {
                    svg +=
                        "<rect class=\"bin\" data-count=\"\(count)\" x=\"\(plotLeft + Double(bin) * plotWidth / Double(bins))\" y=\"\(top + Double(row) * laneHeight + 6)\" width=\"\(plotWidth / Double(bins))\" height=\"\(laneHeight - 12)\" fill-opacity=\"\(0.2 + 0.8 * Double(count) / Double(most))\"/>"
                }
            }
        }
        svg += "</g><g class=\"findings\">"
        for (index, finding) in report.findings.enumerated() {
            let diagnostic = finding.diagnostic
            let attributes =
                "class=\"finding sev-\(diagnostic.severity.rawValue)\" data-index=\"\(index)\" data-code=\"\(escape(diagnostic.code.rawValue))\" data-file=\"\(escape(diagnostic.files.first ?? ""))\""
            switch finding.placement {
            case .event(let store, let globalCount):
                let (cx, cy) = (x(globalCount), y(store) - 12)
                svg +=
                    "<path \(attributes) data-store=\"\(escape(store))\" d=\"M\(cx - 6),\(cy - 8) L\(cx + 6),\(cy - 8) L\(cx),\(cy) Z\"><title>\(escape(diagnostic.code.rawValue))</title></path>"
            case .gap(let store, let from, let to):
                let (left, right) = (x(from), x(to))
                let first = diagnostic.details["first"].map(JSONWriter().string) ?? ""
                let last = diagnostic.details["last"].map(JSONWriter().string) ?? ""
                svg +=
                    "<rect \(attributes) data-store=\"\(escape(store))\" data-first=\"\(first)\" data-last=\"\(last)\" x=\"\(min(left, right) + 6)\" y=\"\(y(store) - 14)\" width=\"\(max(4, abs(right - left) - 12))\" height=\"28\"><title>revisions \(first) to \(last) missing</title></rect>"
            case .dependency(let store, let globalCount, let needs, let revision):
                let (x1, y1, y2) = (x(globalCount), y(store), y(needs))
                svg +=
                    "<g \(attributes) data-store=\"\(escape(store))\" data-needs=\"\(escape(needs))\" data-revision=\"\(revision)\"><line x1=\"\(x1)\" y1=\"\(y1)\" x2=\"\(x1)\" y2=\"\(y2)\" marker-end=\"url(#arrow)\"/><text x=\"\(x1 + 4)\" y=\"\(y2 - 4)\">needs \(revision)</text><title>needs revision \(revision) of \(escape(needs))</title></g>"
            case .lane(let store):
                svg +=
                    "<circle \(attributes) data-store=\"\(escape(store))\" cx=\"\(plotLeft - 6)\" cy=\"\(y(store))\" r=\"7\"><title>\(escape(diagnostic.code.rawValue))</title></circle>"
            case .folder:
                let cx = plotLeft + Double(index % 60) * 16
                svg +=
                    "<rect \(attributes) data-store=\"\" x=\"\(cx)\" y=\"\(top - 30)\" width=\"12\" height=\"12\"><title>\(escape(diagnostic.code.rawValue))</title></rect>"
            }
        }
        svg +=
            "</g><defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\"/></marker></defs>"
        svg +=
            "<text class=\"axis\" x=\"\(plotLeft)\" y=\"\(height - 12)\">global count \(low)</text><text class=\"axis\" x=\"\(plotLeft + plotWidth)\" y=\"\(height - 12)\" text-anchor=\"end\">\(high)</text></svg>"

        var rows = ""
        for (index, finding) in report.findings.enumerated() {
            let diagnostic = finding.diagnostic
            rows +=
                "<tr data-index=\"\(index)\" class=\"sev-\(diagnostic.severity.rawValue)\"><td>\(escape(diagnostic.code.rawValue))</td><td>\(diagnostic.severity.rawValue)</td><td>\(diagnostic.number.map(String.init) ?? "")</td><td>\(escape(diagnostic.files.joined(separator: ", ")))</td><td>\(escape(diagnostic.reason))</td><td>\(escape(diagnostic.consequence))</td></tr>"
        }
        let growth = escape(JSONWriter().string(report.growth))
        let data = JSONWriter().string(
            .object(
                JSONObject([
                    ("low", JSONValue(low)), ("high", JSONValue(high)),
                    ("lanes", .array(report.lanes.map { .string($0.store) })),
                    (
                        "marks",
                        .array(
                            report.marks.map { mark in
                                .array([
                                    .string(mark.file), .string(mark.store), JSONValue(mark.revision), JSONValue(mark.globalCount),
                                    .number(JSONNumber(mark.timestamp)), JSONValue(Int64(mark.type)), JSONValue(Int64(mark.inserts)),
                                    JSONValue(Int64(mark.updates)), JSONValue(Int64(mark.deletes)), mark.modelVersion.map(JSONValue.string) ?? .null,
                                    .array(mark.spans.map(JSONValue.string)),
                                ])
                            })
                    ),
                    (
                        "findings",
                        .array(
                            report.findings.map {
                                .array([
                                    .string($0.diagnostic.code.rawValue), .string($0.diagnostic.severity.rawValue),
                                    .array($0.diagnostic.files.map(JSONValue.string)), .string($0.diagnostic.reason), .object($0.diagnostic.details),
                                ])
                            })
                    ),
                ])))
        return """
            <section class="ensemble" data-identifier="\(escape(report.identifier))">
            <h2>Ensemble \(escape(report.identifier))</h2>
            <p class="growth">Growth (verify): <code>\(growth)</code></p>
            <div class="plot">\(svg)</div>
            <h3>Findings (\(report.findings.count))</h3>
            <table class="findings-table"><thead><tr><th>code</th><th>severity</th><th>number</th><th>files</th><th>reason</th><th>consequence</th></tr></thead><tbody>\(rows)</tbody></table>
            <script type="application/json" class="timeline-data">\(scriptData(data))</script>
            </section>

            """
    }

    /// JSON text made safe inside a `<script>` element: `<`, `>` and `&` (which occur only in
    /// strings) as `\u003c`, `\u003e`, `\u0026`, so that no value can end the element or change
    /// how the HTML parser reads it (`</script>`, `<!--<script>`); U+2028 and U+2029 as `\u2028`
    /// and `\u2029`. The same JSON value reads back (Spec/timeline.md 2).
    static func scriptData(_ json: String) -> String {
        let bytes = Array(json.utf8)
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count + bytes.count / 16)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "<"): result.append(contentsOf: "\\u003c".utf8)
            case UInt8(ascii: ">"): result.append(contentsOf: "\\u003e".utf8)
            case UInt8(ascii: "&"): result.append(contentsOf: "\\u0026".utf8)
            // U+2028 and U+2029 are E2 80 A8 and E2 80 A9 in UTF-8.
            case 0xE2 where index + 2 < bytes.count && bytes[index + 1] == 0x80 && (bytes[index + 2] == 0xA8 || bytes[index + 2] == 0xA9):
                result.append(contentsOf: (bytes[index + 2] == 0xA8 ? "\\u2028" : "\\u2029").utf8)
                index += 2
            default: result.append(byte)
            }
            index += 1
        }
        return String(decoding: result, as: UTF8.self)
    }

    static func escape(_ text: String) -> String {
        var result = ""
        for character in text.unicodeScalars {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&#39;"
            default:
                // Control characters cannot stand in HTML text; show their code instead.
                if character.value < 0x20 && character != "\n" && character != "\t" {
                    result += "\\u{\(String(character.value, radix: 16))}"
                } else {
                    result.unicodeScalars.append(character)
                }
            }
        }
        return result
    }

    static let legend = """
        <section class="legend"><h3>Legend</h3><ul>
        <li><svg width="14" height="14"><circle class="mark type-200" cx="7" cy="7" r="5"/></svg> save event</li>
        <li><svg width="14" height="14"><circle class="mark type-300" cx="7" cy="7" r="5"/></svg> merge event</li>
        <li><svg width="14" height="14"><circle class="mark type-0" cx="7" cy="7" r="5"/></svg> incomplete event (type 0)</li>
        <li><svg width="14" height="14"><rect class="mark baseline" x="3" y="0" width="8" height="14"/></svg> baseline, across the stores it names</li>
        <li><svg width="14" height="14"><path class="finding sev-error" d="M1,2 L13,2 L7,12 Z"/></svg> error, <svg width="14" height="14"><path class="finding sev-warning" d="M1,2 L13,2 L7,12 Z"/></svg> warning, <svg width="14" height="14"><path class="finding sev-info" d="M1,2 L13,2 L7,12 Z"/></svg> info, above the event it concerns</li>
        <li><svg width="14" height="14"><rect class="finding sev-error" x="1" y="2" width="12" height="10"/></svg> missing revisions (a gap), or a finding about the folder (top row)</li>
        <li>dashed arrow: an event needs a revision of another store that is missing</li>
        </ul></section>
        """

    /// Okabe-Ito colours (told apart with the common colour-vision deficiencies), shapes that
    /// differ by severity, and a print style without the controls.
    static let css = """
        body{font:14px system-ui,sans-serif;margin:16px;color:#111}h1{font-size:20px}h2{font-size:17px}
        .plot{overflow:hidden;border:1px solid #ccc}svg.timeline{width:100%;height:auto;cursor:grab;user-select:none}
        .lane-bg{fill:#fff}.lane:nth-child(even) .lane-bg{fill:#f4f4f4}.lane-label,.folder-label,.axis{font-size:12px;fill:#333}
        .mark{stroke:#000;stroke-width:.5}.type-200{fill:#0072B2}.type-300{fill:#009E73}.type-0{fill:#fff;stroke:#000}.type-100,.baseline{fill:#CC79A7;fill-opacity:.6}
        .bin{fill:#0072B2}.out-of-range{stroke:#D55E00;stroke-width:2;stroke-dasharray:2 1}.finding{cursor:pointer}.sev-error{fill:#D55E00;stroke:#D55E00}.sev-warning{fill:#E69F00;stroke:#E69F00}.sev-info{fill:#56B4E9;stroke:#56B4E9}
        rect.finding{fill-opacity:.35;stroke-width:2}g.finding line{stroke-dasharray:4 3;stroke-width:2}g.finding text{font-size:11px;stroke:none}
        #detail{position:sticky;bottom:0;background:#fffbe6;border:1px solid #e0c060;padding:8px;margin-top:8px}
        table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ccc;padding:3px 6px;text-align:left;vertical-align:top;font-size:12px}
        tr.sev-error td:first-child{border-left:4px solid #D55E00}tr.sev-warning td:first-child{border-left:4px solid #E69F00}tr.sev-info td:first-child{border-left:4px solid #56B4E9}
        .legend ul{list-style:none;padding:0}.legend li{margin:2px 0}.hint{color:#666}
        @media print{.controls,#detail{display:none}svg.timeline{cursor:auto}}
        """

    /// Zoom and pan on the x axis, the time axis, and the detail panel; marks are drawn again
    /// for the visible range (one per event while at most 4,000 are visible, counts per bin above).
    /// No array of unbounded length is spread into a call (`Math.min.apply`), whose arguments
    /// live on the stack; a time a Date cannot show is drawn at the edge of the axis
    /// (Spec/timeline.md 2).
    static let script = """
        (function(){
        var L=\(plotLeft),W=\(plotWidth),H=\(laneHeight),T=\(top),LIMIT=\(markLimit),BINS=\(bins),LANES=\(laneLimit),NS='http://www.w3.org/2000/svg';
        var EPOCH=978307200,MAXMS=8.64e15,useTime=false;
        function dated(t){var ms=(t+EPOCH)*1000;return isFinite(ms)&&Math.abs(ms)<=MAXMS;}
        function when(t){return dated(t)?new Date((t+EPOCH)*1000).toISOString():'out of range';}
        document.querySelectorAll('section.ensemble').forEach(function(section){
          var data=JSON.parse(section.querySelector('script.timeline-data').textContent);
          var svg=section.querySelector('svg.timeline'),marks=svg.querySelector('g.marks'),fnd=svg.querySelector('g.findings');
          var lane=Object.create(null);data.lanes.forEach(function(s,i){if(!(s in lane))lane[s]=Math.min(i,LANES-1);});
          function key(m){return useTime?(dated(m[4])?m[4]:null):m[3];}
          var lo,hi,view;
          function range(){lo=Infinity;hi=-Infinity;for(var i=0;i<data.marks.length;i++){var v=key(data.marks[i]);if(v===null)continue;if(v<lo)lo=v;if(v>hi)hi=v;}
            if(lo>hi){lo=0;hi=1;}if(!(hi-lo>0)||!isFinite(hi-lo))hi=lo+Math.max(1,Math.abs(lo)*1e-9);view=[lo,hi];}
          function x(v){return L+(v-view[0])/(view[1]-view[0])*W;}
          function place(m){var v=key(m);return v===null?(m[4]<0?L:L+W):x(v);}
          function y(s){return T+(lane[s]||0)*H+H/2;}
          function el(n,a){var e=document.createElementNS(NS,n);for(var k in a)e.setAttribute(k,a[k]);return e;}
          function add(e,m,out){var t=document.createElementNS(NS,'title');t.textContent=m[0]+(out?' (time out of range)':'');e.appendChild(t);marks.appendChild(e);}
          var atGC=new Map();data.marks.forEach(function(m,i){if(!atGC.has(m[3]))atGC.set(m[3],i);});
          function byGC(gc){var i=atGC.get(gc);return i===undefined?(useTime?null:gc):key(data.marks[i]);}
          function draw(){
            marks.textContent='';
            var visible=[];for(var i=0;i<data.marks.length;i++){var v=key(data.marks[i]);if(v===null||(v>=view[0]&&v<=view[1]))visible.push(i);}
            if(visible.length<=LIMIT){visible.forEach(function(i){var m=data.marks[i],out=key(m)===null?' out-of-range':'';
              if(m[10].length){var a=Infinity,b=-Infinity;m[10].forEach(function(s){var r=lane[s]||0;if(r<a)a=r;if(r>b)b=r;});
                add(el('rect',{'class':'mark baseline'+out,'data-i':i,'data-store':m[1],x:place(m)-4,y:T+a*H+4,width:8,height:(b-a+1)*H-8}),m,out);}
              else add(el('circle',{'class':'mark type-'+m[5]+out,'data-i':i,'data-store':m[1],cx:place(m),cy:y(m[1]),r:5}),m,out);});}
            else{var t={},most=1;visible.forEach(function(i){var m=data.marks[i],v=key(m);var b=v===null?(m[4]<0?0:BINS-1):Math.floor((v-view[0])/(view[1]-view[0])*(BINS-1));
                var k=(lane[m[1]]||0)+':'+b;t[k]=(t[k]||0)+1;if(t[k]>most)most=t[k];});
              Object.keys(t).forEach(function(k){var p=k.split(':');marks.appendChild(el('rect',{'class':'bin','data-count':t[k],x:L+p[1]*W/BINS,y:T+p[0]*H+6,width:W/BINS,height:H-12,'fill-opacity':0.2+0.8*t[k]/most}));});}
            fnd.querySelectorAll('.finding').forEach(function(f){
              var d=data.findings[+f.getAttribute('data-index')],file=(d[2][0]||''),m=/^events\\/(\\d+)_/.exec(file);var gc=m?byGC(+m[1]):null;
              if(f.tagName==='path'&&gc!==null){var cx=x(gc),cy=y(f.getAttribute('data-store'))-12;f.setAttribute('d','M'+(cx-6)+','+(cy-8)+' L'+(cx+6)+','+(cy-8)+' L'+cx+','+cy+' Z');}
              if(f.tagName==='g'&&gc!==null){var ln=f.querySelector('line'),tx=f.querySelector('text');ln.setAttribute('x1',x(gc));ln.setAttribute('x2',x(gc));tx.setAttribute('x',x(gc)+4);}
            });
          }
          function show(v){if(isFinite(v[0])&&isFinite(v[1])&&v[1]-v[0]>0&&isFinite(v[1]-v[0])){view=v;draw();}}
          range();
          var drag=null;
          svg.addEventListener('wheel',function(e){e.preventDefault();var r=svg.getBoundingClientRect(),f=(e.clientX-r.left)/r.width*(L+W+40);
            var c=view[0]+(f-L)/W*(view[1]-view[0]),z=e.deltaY<0?0.8:1.25;show([c-(c-view[0])*z,c+(view[1]-c)*z]);},{passive:false});
          svg.addEventListener('mousedown',function(e){drag={x:e.clientX,v:view.slice()};});
          window.addEventListener('mouseup',function(){drag=null;});
          window.addEventListener('mousemove',function(e){if(!drag)return;var r=svg.getBoundingClientRect(),dv=(e.clientX-drag.x)/r.width*(L+W+40)/W*(drag.v[1]-drag.v[0]);show([drag.v[0]-dv,drag.v[1]-dv]);});
          svg.addEventListener('click',function(e){var t=e.target.closest('[data-i],[data-index]');if(!t)return;var p=document.getElementById('detail'),h='';
            if(t.hasAttribute('data-i')){var m=data.marks[+t.getAttribute('data-i')];
              h='<h3>'+esc(m[0])+'</h3><p>store '+esc(m[1])+', revision '+m[2]+', global count '+m[3]+', time '+m[4]+' ('+when(m[4])+'), type '+m[5]+'</p><p>inserts '+m[6]+', updates '+m[7]+', deletes '+m[8]+'; model version '+esc(m[9]===null?'none':m[9])+'</p>';
              var own=data.findings.filter(function(f){return f[2].indexOf(m[0])>=0;});h+=own.length?'<ul>'+own.map(function(f){return '<li>'+esc(f[0])+': '+esc(f[3])+'</li>';}).join('')+'</ul>':'<p>no finding</p>';}
            else{var f=data.findings[+t.getAttribute('data-index')];h='<h3>'+esc(f[0])+' ('+f[1]+')</h3><p>'+esc(f[2].join(', '))+'</p><p>'+esc(f[3])+'</p><pre>'+esc(JSON.stringify(f[4]))+'</pre>';}
            p.innerHTML=h;p.setAttribute('data-shown',t.getAttribute('data-i')!==null?'mark':'finding');});
          section.redraw=function(){range();draw();};
        });
        function esc(s){return String(s).replace(/[&<>"']/g,function(c){return {'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;',"'":'&#39;'}[c];});}
        document.getElementById('axis').addEventListener('click',function(){useTime=!useTime;this.textContent=useTime?'x: time (switch to global count)':'x: global count (switch to time)';
          document.querySelectorAll('section.ensemble').forEach(function(s){s.redraw();});});
        document.getElementById('reset').addEventListener('click',function(){document.querySelectorAll('section.ensemble').forEach(function(s){s.redraw();});});
        document.documentElement.setAttribute('data-script','ready');
        })();
        """
}
