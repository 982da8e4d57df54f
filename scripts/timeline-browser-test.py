#!/usr/bin/env python3
"""Opens `logtool timeline` pages in a real headless browser (the system's chromium through
Selenium) and checks what a user sees (Spec/timeline.md 5):

- no console errors;
- one lane per store of `logtool inspect`;
- every finding of `logtool verify` drawn once, on the lane of the store it concerns, and a
  revision gap drawn between the marks of the revisions around it;
- a click on an event shows that event in the detail panel;
- geometry, on the damaged fixture and on the device-held-back case seen as STORE-AA: every mark,
  label and tick lies inside the SVG's viewBox; each mark on a lane (events, findings about an
  event, unread events, gaps, the unregistered dot) lies within its lane's band; no two lane
  labels overlap and each fits the label column; the legend has an entry for every kind of mark
  drawn (`data-kind`); a click on a row of the findings table selects the row's marks and shows
  its details inside the visible viewport, next to the drawing; the same geometry once zoomed in
  and on the time axis; 80 findings about the folder wrap onto rows without overlapping;
- a page of 4,400 events (above the 4,000 marks beyond which the page draws bins) draws bins and,
  zoomed in, single events again; with --large (by hand: it adds about half a minute, generating
  and drawing a folder, a size run that checks nothing the 4,400 events do not) the page has
  20,000 events, and with LOGTOOL_TIMELINE_EVENTS=N (by hand, for example 100000) a page of N
  events must render in under 5 seconds, a figure that belongs to a measurement, not to every
  test run;
- names holding `<!--<script>` hide nothing: every ensemble, the legend and the page's script are
  there, with no console error;
- timestamps of 1e300 and -1e300 give no console error and no NaN, on either axis, and a store
  named `constructor` (a property every JavaScript object has) keeps its lane;
- with --million or LOGTOOL_TIMELINE_HUGE=1 (by hand: it takes minutes), a page of 1,000,000
  events loads and zooms (LOGTOOL_TIMELINE_HUGE_EVENTS changes the count); with --million the
  page must also be at most 10 MB and its first render (navigation start to the end of the load
  event, by the browser's performance timing) at most 1 s (Spec/timeline.md 4, 5);
  LOGTOOL_TIMELINE_HUGE_FOLDER=DIR keeps the generated folder in DIR for later runs.

Usage: python3 scripts/timeline-browser-test.py [--large] [--million] LOGTOOL
With LOGTOOL_TIMELINE_SCREENSHOTS=DIR it also saves the two fixtures' pages, as a 1400x900 window
shows them, to DIR/timeline-damaged.png and DIR/timeline-device-held-back.png (docs/ holds them).
Exit status: 0 when every check passes, 1 otherwise. Needs chromium, chromium-driver and selenium.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL " + message)


def run(logtool, *args, cwd=None):
    return subprocess.run([logtool, *args], capture_output=True, text=True, cwd=cwd)


def browser(work):
    # The profile lives in the scratch folder: chromedriver's own default, a folder in the
    # system's temporary directory, was sometimes left behind after quit().
    options = Options()
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1400,900", "--hide-scrollbars"):
        options.add_argument(argument)
    options.add_argument("--user-data-dir=" + os.path.join(work, "profile"))
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    for binary in ("/usr/bin/chromium", "/usr/bin/chromium-browser"):
        if os.path.exists(binary):
            options.binary_location = binary
    driver_path = next((p for p in ("/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver") if os.path.exists(p)), None)
    return webdriver.Chrome(options=options, service=Service(driver_path) if driver_path else None)


def console_errors(driver):
    return [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def fixture_page(logtool, driver, work):
    folder = os.path.join(REPO, "Fixtures/folders/damaged/cloud")
    page = os.path.join(work, "damaged.html")
    # From the repository, so that the page names the fixture as the README does.
    made = run(logtool, "timeline", "Fixtures/folders/damaged/cloud", "-o", page, cwd=REPO)
    check(made.returncode == 0, "timeline of the damaged fixture exits 0: " + made.stderr)
    inspect = json.loads(run(logtool, "inspect", "--json", folder).stdout)
    verify = json.loads(run(logtool, "verify", "--json", folder).stdout)
    stores = [store["identifier"] for store in inspect["ensembles"][0]["stores"]]
    findings = verify["ensembles"][0]["diagnostics"]

    driver.get("file://" + page)
    check(console_errors(driver) == [], "no console errors on the damaged fixture")
    lanes = [lane.get_attribute("data-store") for lane in driver.find_elements(By.CSS_SELECTOR, "g.lane")]
    check(lanes == stores, "one lane per store, in order: %s, expected %s" % (lanes, stores))

    drawn = driver.find_elements(By.CSS_SELECTOR, "svg.timeline .finding")
    check(len(drawn) == len(findings), "%d findings drawn, verify reports %d" % (len(drawn), len(findings)))
    by_index = {int(element.get_attribute("data-index")): element for element in drawn}
    for index, finding in enumerate(findings):
        element = by_index.get(index)
        if element is None:
            check(False, "finding %d (%s) is not drawn" % (index, finding["code"]))
            continue
        check(element.get_attribute("data-code") == finding["code"], "finding %d is drawn as %s" % (index, finding["code"]))
        name = re.match(r"events/(\d+)_(.+)_(\d+)(_\d+of\d+)?\.cdeevent", finding["files"][0]) if finding["files"] else None
        store = finding["details"].get("store") or (name.group(2) if name else "")
        check(element.get_attribute("data-store") == store, "finding %d (%s) is on the lane of %r, not %r" % (
            index, finding["code"], store, element.get_attribute("data-store")))

    # A finding about an event file that inspect could not read (no mark of its own) is a cross on
    # the store's lane; one about an event that has a mark is a triangle over it.
    read = {e["file"] for e in inspect["ensembles"][0]["events"] if e.get("type") is not None}
    unread = 0
    for index, finding in enumerate(findings):
        first = finding["files"][0] if finding["files"] else ""
        element = by_index.get(index)
        if element is None or not re.match(r"events/\d+_", first) or finding["code"] in ("verify.revision-gap", "verify.unregistered-store"):
            continue
        wanted = "event-finding" if first in read else "unread-event"
        unread += wanted == "unread-event"
        check(element.get_attribute("data-kind") == wanted, "finding %d (%s) about %s is drawn as %s, not %s" % (
            index, finding["code"], first, wanted, element.get_attribute("data-kind")))
    check(unread == 4, "the two unreadable files, the empty one and the incomplete multipart set are unread events: %d" % unread)

    gaps = [f for f in findings if f["code"] == "verify.revision-gap"]
    check(len(gaps) == 1, "the damaged fixture has one revision gap")
    for gap in gaps:
        store, first, last = gap["details"]["store"], gap["details"]["first"], gap["details"]["last"]
        marker = driver.find_element(By.CSS_SELECTOR, 'rect.finding[data-code="verify.revision-gap"][data-store="%s"]' % store)
        check(marker.get_attribute("data-first") == str(first) and marker.get_attribute("data-last") == str(last), "the gap marker names revisions %d to %d" % (first, last))
        events = {e["revision"]: e for e in inspect["ensembles"][0]["events"] if e["store"] == store}
        circles = driver.find_elements(By.CSS_SELECTOR, 'circle.mark[data-store="%s"]' % store)
        x_of = {}
        for circle in circles:
            title = circle.find_element(By.TAG_NAME, "title").get_attribute("textContent")
            for revision, event in events.items():
                if event["file"] == title:
                    x_of[revision] = float(circle.get_attribute("cx"))
        left, right = x_of.get(first - 1), x_of.get(last + 1)
        x, width = float(marker.get_attribute("x")), float(marker.get_attribute("width"))
        check(left is not None and right is not None and left < x and x + width < right,
              "the gap marker lies between revision %d (x=%s) and revision %d (x=%s): %s..%s" % (first - 1, left, last + 1, right, x, x + width))

    mark = driver.find_element(By.CSS_SELECTOR, "svg.timeline circle.mark")
    title = mark.find_element(By.TAG_NAME, "title").get_attribute("textContent")
    driver.execute_script("arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true}))", mark)
    detail = driver.find_element(By.ID, "detail").text
    check(title in detail, "a click on %s shows it in the detail panel: %r" % (title, detail[:200]))
    check(console_errors(driver) == [], "no console errors after the click")
    driver.get("file://" + page)
    geometry(driver, "damaged")
    selection(driver, "damaged")
    screenshot(driver, "damaged")
    # Zoomed in, and on the time axis, what is drawn still lies inside the drawing and on its lane.
    driver.get("file://" + page)
    driver.execute_script(
        "var s=document.querySelector('svg.timeline'),r=s.getBoundingClientRect();for(var i=0;i<4;i++)s.dispatchEvent(new WheelEvent('wheel',"
        "{deltaY:-1,clientX:r.left+r.width*0.55,bubbles:true,cancelable:true}));")
    geometry(driver, "damaged, zoomed in")
    driver.find_element(By.ID, "axis").click()
    geometry(driver, "damaged, time axis")


GEOMETRY = """
var svg=arguments[0],vb=svg.viewBox.baseVal,out={viewBox:[vb.x,vb.y,vb.width,vb.height],items:[],lanes:{},labels:[],
  labelRight:+svg.getAttribute('data-label-right'),legend:[]};
function box(e){var b=e.getBBox();return [b.x,b.y,b.width,b.height];}
svg.querySelectorAll('g.lane').forEach(function(g){var r=g.querySelector('rect.lane-bg');
  if(g.hasAttribute('data-store'))out.lanes[g.getAttribute('data-store')]=[+r.getAttribute('y'),+r.getAttribute('y')+(+r.getAttribute('height'))];
  g.querySelectorAll('text').forEach(function(t){out.labels.push({text:t.textContent,box:box(t)});});});
svg.querySelectorAll('.mark,.bin,.finding,text,line.tick').forEach(function(e){
  if(e.closest('[visibility="hidden"]'))return;
  out.items.push({tag:e.tagName,cls:e.getAttribute('class')||'',kind:e.getAttribute('data-kind'),store:e.getAttribute('data-store'),
    index:e.getAttribute('data-index'),text:(e.textContent||'').slice(0,60),box:box(e)});});
document.querySelectorAll('section.legend li[data-kind]').forEach(function(li){out.legend.push(li.getAttribute('data-kind'));});
return out;
"""

# The marks that lie on one lane: they must stay inside its band (a baseline spans lanes and a
# dependency arrow goes from one lane to another, so they are only held to the viewBox).
LANE_KINDS = {"save", "merge", "incomplete", "other-event", "bin", "event-finding", "unread-event", "gap", "unregistered"}


def overlap(a, b):
    return a[0] < b[0] + b[2] and b[0] < a[0] + a[2] and a[1] < b[1] + b[3] and b[1] < a[1] + a[3]


def geometry(driver, name):
    """What a person sees must be where the drawing says: inside the drawing, on its lane,
    labels apart and inside their column, every kind of mark in the legend."""
    for svg in driver.find_elements(By.CSS_SELECTOR, "svg.timeline"):
        g = driver.execute_script(GEOMETRY, svg)
        vx, vy, vw, vh = g["viewBox"]
        for item in g["items"]:
            x, y, w, h = item["box"]
            check(vx - 0.5 <= x and x + w <= vx + vw + 0.5 and vy - 0.5 <= y and y + h <= vy + vh + 0.5,
                  "%s: %s %s (%s) lies inside the viewBox %s: %s" % (name, item["tag"], item["kind"] or item["cls"], item["text"], g["viewBox"], item["box"]))
            if item["kind"] in LANE_KINDS:
                band = g["lanes"].get(item["store"])
                check(band is not None and band[0] - 0.5 <= y and y + h <= band[1] + 0.5,
                      "%s: %s %s of %r lies within its lane's band %s: y %s..%s" % (name, item["kind"], item["index"] or "", item["store"], band, y, y + h))
            if item["cls"].startswith(("mark", "bin", "finding")) or " finding" in item["cls"]:
                check(item["kind"] is not None, "%s: %s %s has a data-kind" % (name, item["tag"], item["cls"]))
                check(item["kind"] in g["legend"], "%s: the legend explains the mark kind %r" % (name, item["kind"]))
        squares = [item for item in g["items"] if item["kind"] == "folder"]
        for i, square in enumerate(squares):
            for other in squares[i + 1:]:
                check(not overlap(square["box"], other["box"]), "%s: the folder squares of findings %s and %s do not overlap" % (
                    name, square["index"], other["index"]))
        labels = g["labels"]
        for i, label in enumerate(labels):
            x, y, w, h = label["box"]
            check(x >= 0 and x + w <= g["labelRight"] + 0.5, "%s: the lane label %r fits its column (x %s..%s, column ends at %s)" % (
                name, label["text"], x, x + w, g["labelRight"]))
            for other in labels[i + 1:]:
                check(not overlap(label["box"], other["box"]), "%s: the lane labels %r and %r do not overlap" % (name, label["text"], other["text"]))
    check(console_errors(driver) == [], "%s: no console errors after the geometry checks" % name)


def in_viewport(driver, element):
    return driver.execute_script(
        "var r=arguments[0].getBoundingClientRect();return r.width>0&&r.height>0&&r.top>=0&&r.left>=0&&r.bottom<=innerHeight&&r.right<=innerWidth;", element)


def selection(driver, name):
    """A click on a row of the findings table selects the finding's marks and shows its details
    where the user looks: beside the drawing, inside the viewport."""
    rows = driver.find_elements(By.CSS_SELECTOR, "table.findings-table tr[data-index]")
    check(len(rows) > 0, "%s: the findings table has rows" % name)
    for row in rows:
        index = row.get_attribute("data-index")
        section = row.find_element(By.XPATH, "ancestor::section[1]")
        code = row.find_element(By.TAG_NAME, "td").text
        driver.execute_script("arguments[0].scrollIntoView({block:'end'})", row)
        row.click()
        drawn = section.find_elements(By.CSS_SELECTOR, 'svg.timeline .finding[data-index="%s"]' % index)
        check(len(drawn) == 1 and "selected" in drawn[0].get_attribute("class"), "%s: clicking row %s selects its mark" % (name, index))
        check("selected" in row.get_attribute("class"), "%s: clicking row %s highlights the row" % (name, index))
        files = [f.strip() for f in row.find_elements(By.TAG_NAME, "td")[3].text.split(",") if f.strip()]
        for file in files:
            marks = [m for m in section.find_elements(By.CSS_SELECTOR, "svg.timeline .mark") if m.find_element(By.TAG_NAME, "title").get_attribute("textContent") == file]
            for mark in marks:
                check("selected" in mark.get_attribute("class"), "%s: clicking row %s selects the event mark of %s" % (name, index, file))
        panel = driver.find_element(By.ID, "detail")
        check(code in panel.text and in_viewport(driver, panel), "%s: row %s (%s) shows its details in the viewport: %r" % (name, index, code, panel.text[:120]))
        check(in_viewport(driver, drawn[0]) if drawn else False, "%s: the selected mark of row %s is in the viewport" % (name, index))
        check(driver.execute_script("return !!arguments[0].querySelector('dl') && !/^\\s*[\\[{]/.test(arguments[0].querySelector('dl dd').textContent)", panel),
              "%s: the details of row %s are fields, not raw JSON" % (name, index))
    check(console_errors(driver) == [], "%s: no console errors after selecting rows" % name)


def screenshot(driver, name):
    folder = os.environ.get("LOGTOOL_TIMELINE_SCREENSHOTS")
    if not folder:
        return
    # The first finding of the table selected, the page at its top: the drawing with its details.
    rows = driver.find_elements(By.CSS_SELECTOR, "table.findings-table tr[data-index]")
    if rows:
        rows[0].click()
    driver.execute_script("window.scrollTo(0,0)")
    driver.save_screenshot(os.path.join(folder, "timeline-%s.png" % name))


def device_page(logtool, driver, work):
    """The device-held-back case seen as STORE-AA: held-back events are findings on its lanes."""
    page = os.path.join(work, "held-back.html")
    made = run(logtool, "timeline", "--as-store", "STORE-AA", "Fixtures/merge/device-held-back/cloud/E", "-o", page, cwd=REPO)
    check(made.returncode == 0, "timeline of the device-held-back case exits 0: " + made.stderr)
    driver.get("file://" + page)
    check(console_errors(driver) == [], "no console errors on the device-held-back case")
    check(len(driver.find_elements(By.CSS_SELECTOR, '.finding[data-code="verify.held-back"]')) == 4, "four held-back events are drawn")
    geometry(driver, "device-held-back")
    selection(driver, "device-held-back")
    screenshot(driver, "device-held-back")


def folder_row(logtool, driver, work):
    """80 findings about the folder (iCloud placeholders, which name no event) take more than one
    row of squares: the row wraps, inside the drawing, without squares on top of each other."""
    ensemble = os.path.join(work, "placeholders", "cloud", "E")
    write_ensemble(ensemble, "P-STORE", [(1, 0, "1.0"), (2, 1, "2.0")])
    for index in range(80):
        with open(os.path.join(ensemble, "events", ".%d_P-STORE_%d.cdeevent.icloud" % (100 + index, 100 + index)), "w") as f:
            f.write("placeholder")
    page = os.path.join(work, "placeholders.html")
    made = run(logtool, "timeline", os.path.dirname(ensemble), "-o", page)
    check(made.returncode == 0, "timeline of the placeholder folder exits 0: " + made.stderr)
    driver.get("file://" + page)
    squares = driver.find_elements(By.CSS_SELECTOR, 'svg.timeline .finding[data-kind="folder"]')
    # The 80 placeholders, and the registration write_ensemble writes (verify.invalid-registration).
    check(len(squares) == 81, "81 findings in the folder row: %d" % len(squares))
    geometry(driver, "placeholders")


def large_page(logtool, driver, work, large):
    timed = "LOGTOOL_TIMELINE_EVENTS" in os.environ
    count = int(os.environ.get("LOGTOOL_TIMELINE_EVENTS", "20000" if large else "4400"))
    folder = os.path.join(work, "large")
    made = run(logtool, "generate", "--stores", "10", "--objects", "1000", "--changes", str(count), "--changes-per-event", "1",
               "--encoding", "binary", "--seed", "7", folder)
    check(made.returncode == 0, "generate %d events: %s" % (count, made.stderr))
    page = os.path.join(work, "large.html")
    started = time.time()
    made = run(logtool, "timeline", os.path.join(folder, "cloud"), "-o", page)
    print("timeline of %d events written in %.1f s (%d bytes)" % (count, time.time() - started, os.path.getsize(page)))
    check(made.returncode == 0, "timeline of the large folder: " + made.stderr)
    started = time.time()
    driver.get("file://" + page)
    driver.execute_script("return document.readyState")
    rendered = time.time() - started
    print("page of %d events rendered in %.2f s" % (count, rendered))
    if timed:
        check(rendered < 5, "the page of %d events renders in under 5 s (%.2f s)" % (count, rendered))
    check(len(driver.find_elements(By.CSS_SELECTOR, "g.lane")) == 10, "the large page has 10 lanes")
    check(console_errors(driver) == [], "no console errors on the large page")
    # More events in view than TimelinePage.markLimit (4,000): bins, not single events.
    if count > 4000:
        check(len(driver.find_elements(By.CSS_SELECTOR, "svg.timeline rect.bin")) > 0 and
              len(driver.find_elements(By.CSS_SELECTOR, "svg.timeline circle.mark")) == 0, "the page of %d events draws bins" % count)
    # Zoomed in far enough, single events are drawn again: step by step (up to 40 steps, which
    # on fewer events could zoom past every one of them) until they are.
    zoomed = driver.execute_script(
        "var s=document.querySelector('svg.timeline');for(var i=0;i<40;i++){s.dispatchEvent(new WheelEvent('wheel',{deltaY:-1,clientX:400,bubbles:true,cancelable:true}));"
        "if(s.querySelector('circle.mark'))return i+1;}return 0;")
    check(zoomed > 0 and len(driver.find_elements(By.CSS_SELECTOR, "svg.timeline circle.mark")) > 0, "zooming in draws single events")
    print("single events drawn after %d zoom steps" % zoomed)
    check(console_errors(driver) == [], "no console errors after zooming")


def write_ensemble(folder, store, events, entity="Item"):
    """An ensemble folder of `store`'s events [(global count, revision, timestamp text)]."""
    for sub in ("stores", "events", "baselines", "data"):
        os.makedirs(os.path.join(folder, sub), exist_ok=True)
    xml = store.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    with open(os.path.join(folder, "stores", store), "w") as f:
        f.write('<?xml version="1.0" encoding="UTF-8"?>\n<plist version="1.0"><dict><key>storeIdentifier</key>'
                "<string>%s</string></dict></plist>\n" % xml)
    for count, revision, timestamp in events:
        event = {"changesByEntity": {entity: [{"globalIdentifier": "i%d" % count, "type": 100,
                                               "properties": [{"propertyName": "title", "type": 0, "value": entity}]}]},
                 "globalCount": count, "revisionsByStoreIdentifier": {store: revision}, "storeIdentifier": store,
                 "timestamp": timestamp, "type": 200, "uniqueIdentifier": "%s-%d" % (store, count)}
        with open(os.path.join(folder, "events", "%d_%s_%d.cdeevent" % (count, store, revision)), "w") as f:
            json.dump(event, f, sort_keys=True, separators=(",", ":"))


def script_ran(driver):
    return driver.execute_script("return document.documentElement.getAttribute('data-script')") == "ready"


def markup_names(logtool, driver, work):
    """Every name holds `<!--<script>`, which once put the HTML parser in its "script data double
    escaped" state: the first ensemble's data element swallowed the rest of the page."""
    hostile = "<!--<script>"
    root = os.path.join(work, "markup", "cloud")
    for index in range(3):
        # A revision gap in each, so that each ensemble has a finding to lose.
        write_ensemble(os.path.join(root, "E%s%d" % (hostile, index)), "S%s%d" % (hostile, index),
                       [(1, 0, "1.0"), (2, 2, "2.0")], entity="Item" + hostile)
    page = os.path.join(work, "markup.html")
    made = run(logtool, "timeline", root, "-o", page)
    check(made.returncode == 0, "timeline of the markup folder exits 0: " + made.stderr)
    verify = json.loads(run(logtool, "verify", "--json", root).stdout)
    driver.get("file://" + page)
    sections = driver.find_elements(By.CSS_SELECTOR, "section.ensemble")
    check(len(sections) == len(verify["ensembles"]) == 3, "all 3 ensembles of the markup folder are on the page: %d" % len(sections))
    findings = sum(len(e["diagnostics"]) for e in verify["ensembles"])
    drawn = driver.find_elements(By.CSS_SELECTOR, "svg.timeline .finding")
    check(findings > 0 and len(drawn) == findings, "%d findings drawn, verify reports %d" % (len(drawn), findings))
    check(len(driver.find_elements(By.CSS_SELECTOR, "section.legend")) == 1 and len(driver.find_elements(By.ID, "detail")) == 1,
          "the legend and the detail panel follow the data")
    check(script_ran(driver), "the page's script ran on the markup folder")
    lanes = [lane.get_attribute("data-store") for lane in driver.find_elements(By.CSS_SELECTOR, "g.lane")]
    check(lanes == ["S%s%d" % (hostile, i) for i in range(3)], "the lanes carry the names as they are: %s" % lanes)
    check(console_errors(driver) == [], "no console errors on the markup folder: %s" % console_errors(driver))


def far_timestamps(logtool, driver, work):
    """Times a JavaScript Date cannot show are drawn at the edge of the time axis."""
    root = os.path.join(work, "far", "cloud")
    write_ensemble(os.path.join(root, "E"), "FAR-STORE", [(1, 0, "10.0"), (2, 1, "1e300"), (3, 2, "-1e300"), (4, 3, "20.0")])
    # A store named like a property every JavaScript object has: its lane must still be a number.
    write_ensemble(os.path.join(root, "F"), "constructor", [(1, 0, "5.0"), (2, 1, "6.0")])
    page = os.path.join(work, "far.html")
    made = run(logtool, "timeline", root, "-o", page)
    check(made.returncode == 0, "timeline of the far folder exits 0: " + made.stderr)
    driver.get("file://" + page)
    check(script_ran(driver), "the page's script ran on the far folder")

    def numbers_finite():
        values = driver.execute_script(
            "var r=[];document.querySelectorAll('svg.timeline .mark, svg.timeline .bin').forEach(function(e){"
            "['cx','cy','x','y','width','height'].forEach(function(a){if(e.hasAttribute(a))r.push(e.getAttribute(a));});});return r;")
        return values and all(re.fullmatch(r"-?[0-9.e+-]+", v) and v not in ("NaN",) for v in values)

    for axis in ("global count", "time"):
        if axis == "time":
            driver.find_element(By.ID, "axis").click()
        driver.execute_script(
            "var s=document.querySelector('svg.timeline');for(var i=0;i<5;i++)s.dispatchEvent(new WheelEvent('wheel',{deltaY:-1,clientX:500,bubbles:true,cancelable:true}));"
            "for(var i=0;i<5;i++)s.dispatchEvent(new WheelEvent('wheel',{deltaY:1,clientX:500,bubbles:true,cancelable:true}));")
        check(numbers_finite(), "every mark has finite coordinates on the %s axis" % axis)
        for mark in driver.find_elements(By.CSS_SELECTOR, "svg.timeline circle.mark"):
            driver.execute_script("arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true}))", mark)
        check(console_errors(driver) == [], "no console errors on the %s axis of the far folder" % axis)
    proto = driver.execute_script(
        "return Array.prototype.map.call(document.querySelectorAll('circle.mark[data-store=\"constructor\"]'),function(c){return c.getAttribute('cy');});")
    check(len(proto) == 2 and all(re.fullmatch(r"[0-9.]+", v) for v in proto), "the marks of store constructor sit on its lane: %s" % proto)
    pinned = driver.find_elements(By.CSS_SELECTOR, "svg.timeline circle.mark.out-of-range")
    check(len(pinned) == 2, "the two far events are drawn out of range on the time axis: %d" % len(pinned))
    if pinned:
        driver.execute_script("arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true}))", pinned[0])
        check("out of range" in driver.find_element(By.ID, "detail").text, "the detail panel says the time is out of range")
    check(console_errors(driver) == [], "no console errors after clicking the far events")


def huge_page(logtool, driver, work, bounded):
    """Opt-in: a page of a million events loads and zooms (its script once died at load); with
    --million (`bounded`) it is at most 10 MB and renders first in at most 1 s."""
    count = int(os.environ.get("LOGTOOL_TIMELINE_HUGE_EVENTS", "1000000"))
    # LOGTOOL_TIMELINE_HUGE_FOLDER keeps the generated folder for the next run (generating it
    # takes longer than the rest of the test).
    folder = os.environ.get("LOGTOOL_TIMELINE_HUGE_FOLDER") or os.path.join(work, "huge")
    if not os.path.isdir(os.path.join(folder, "cloud")):
        started = time.time()
        made = run(logtool, "generate", "--stores", "10", "--objects", "1000", "--changes", str(count), "--changes-per-event", "1",
                   "--encoding", "binary", "--seed", "11", folder)
        print("generated %d events in %.1f s" % (count, time.time() - started))
        check(made.returncode == 0, "generate %d events: %s" % (count, made.stderr))
    page = os.path.join(work, "huge.html")
    started = time.time()
    made = run(logtool, "timeline", os.path.join(folder, "cloud"), "-o", page)
    check(made.returncode == 0, "timeline of %d events: %s" % (count, made.stderr))
    size = os.path.getsize(page)
    print("timeline of %d events written in %.1f s (%d bytes)" % (count, time.time() - started, size))
    started = time.time()
    driver.get("file://" + page)
    print("page of %d events loaded in %.2f s" % (count, time.time() - started))
    # The browser's own measure: from the navigation's start to the end of the load event (the
    # page's script runs before it ends).
    render = driver.execute_script("var e=performance.getEntriesByType('navigation')[0];return e.loadEventEnd-e.startTime;") / 1000
    paint = driver.execute_script("var e=performance.getEntriesByName('first-contentful-paint')[0];return e?e.startTime:null;")
    print("first render of %d events: %.3f s to the load event's end, first contentful paint at %s ms" % (count, render, paint))
    if bounded:
        check(size <= 10_000_000, "the page of %d events is at most 10 MB: %d bytes" % (count, size))
        check(0 < render <= 1.0, "the page of %d events renders first in at most 1 s: %.3f s" % (count, render))
    check(script_ran(driver), "the page's script ran on %d events" % count)
    check(console_errors(driver) == [], "no console errors on %d events: %s" % (count, console_errors(driver)[:3]))
    started = time.time()
    driver.execute_script(
        "var s=document.querySelector('svg.timeline');for(var i=0;i<60;i++)s.dispatchEvent(new WheelEvent('wheel',{deltaY:-1,clientX:400,bubbles:true,cancelable:true}));")
    print("60 zoom steps on %d events in %.2f s" % (count, time.time() - started))
    check(len(driver.find_elements(By.CSS_SELECTOR, "svg.timeline circle.mark")) > 0, "zooming in on %d events draws single events" % count)
    check(console_errors(driver) == [], "no console errors after zooming %d events" % count)


def main():
    arguments = sys.argv[1:]
    large = "--large" in arguments
    million = "--million" in arguments
    arguments = [a for a in arguments if a not in ("--large", "--million")]
    if len(arguments) != 1:
        sys.exit(__doc__)
    logtool = os.path.abspath(arguments[0]) if os.sep in arguments[0] else arguments[0]
    # chromium's helper processes may still be closing files in the profile after quit().
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as work:
        driver = browser(work)
        try:
            fixture_page(logtool, driver, work)
            device_page(logtool, driver, work)
            folder_row(logtool, driver, work)
            markup_names(logtool, driver, work)
            far_timestamps(logtool, driver, work)
            large_page(logtool, driver, work, large)
            if million or os.environ.get("LOGTOOL_TIMELINE_HUGE") == "1":
                huge_page(logtool, driver, work, million)
        finally:
            driver.quit()
    print("timeline browser test: %d failure(s)" % len(failures))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
