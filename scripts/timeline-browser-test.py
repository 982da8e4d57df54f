#!/usr/bin/env python3
"""Opens `logtool timeline` pages in a real headless browser (the system's chromium through
Selenium) and checks what a user sees (Spec/timeline.md 5):

- no console errors;
- one lane per store of `logtool inspect`;
- every finding of `logtool verify` drawn once, on the lane of the store it concerns, and a
  revision gap drawn between the marks of the revisions around it;
- a click on an event shows that event in the detail panel;
- a page of 20,000 events (five times the count above which the page draws bins) renders and
  zooms; with LOGTOOL_TIMELINE_EVENTS=N (by hand, for example 100000) a page of N events must
  render in under 5 seconds, a figure that belongs to a measurement, not to every test run;
- names holding `<!--<script>` hide nothing: every ensemble, the legend and the page's script are
  there, with no console error;
- timestamps of 1e300 and -1e300 give no console error and no NaN, on either axis, and a store
  named `constructor` (a property every JavaScript object has) keeps its lane;
- with LOGTOOL_TIMELINE_HUGE=1 (by hand: it takes minutes), a page of 1,000,000 events loads and
  zooms (LOGTOOL_TIMELINE_HUGE_EVENTS changes the count).

Usage: python3 scripts/timeline-browser-test.py LOGTOOL
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


def run(logtool, *args):
    return subprocess.run([logtool, *args], capture_output=True, text=True)


def browser(work):
    # The profile lives in the scratch folder: chromedriver's own default, a folder in the
    # system's temporary directory, was sometimes left behind after quit().
    options = Options()
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
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
    made = run(logtool, "timeline", folder, "-o", page)
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

    mark = driver.find_element(By.CSS_SELECTOR, "circle.mark")
    title = mark.find_element(By.TAG_NAME, "title").get_attribute("textContent")
    driver.execute_script("arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true}))", mark)
    detail = driver.find_element(By.ID, "detail").text
    check(title in detail, "a click on %s shows it in the detail panel: %r" % (title, detail[:200]))
    check(console_errors(driver) == [], "no console errors after the click")


def large_page(logtool, driver, work):
    timed = "LOGTOOL_TIMELINE_EVENTS" in os.environ
    count = int(os.environ.get("LOGTOOL_TIMELINE_EVENTS", "20000"))
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
    # Zoomed in far enough, single events are drawn again.
    driver.execute_script(
        "var s=document.querySelector('svg.timeline');for(var i=0;i<40;i++)s.dispatchEvent(new WheelEvent('wheel',{deltaY:-1,clientX:400,bubbles:true,cancelable:true}));")
    check(len(driver.find_elements(By.CSS_SELECTOR, "circle.mark")) > 0, "zooming in draws single events")
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
        for mark in driver.find_elements(By.CSS_SELECTOR, "circle.mark"):
            driver.execute_script("arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true}))", mark)
        check(console_errors(driver) == [], "no console errors on the %s axis of the far folder" % axis)
    proto = driver.execute_script(
        "return Array.prototype.map.call(document.querySelectorAll('circle.mark[data-store=\"constructor\"]'),function(c){return c.getAttribute('cy');});")
    check(len(proto) == 2 and all(re.fullmatch(r"[0-9.]+", v) for v in proto), "the marks of store constructor sit on its lane: %s" % proto)
    pinned = driver.find_elements(By.CSS_SELECTOR, "circle.mark.out-of-range")
    check(len(pinned) == 2, "the two far events are drawn out of range on the time axis: %d" % len(pinned))
    if pinned:
        driver.execute_script("arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true}))", pinned[0])
        check("out of range" in driver.find_element(By.ID, "detail").text, "the detail panel says the time is out of range")
    check(console_errors(driver) == [], "no console errors after clicking the far events")


def huge_page(logtool, driver, work):
    """Opt-in: a page of a million events loads and zooms (its script once died at load)."""
    count = int(os.environ.get("LOGTOOL_TIMELINE_HUGE_EVENTS", "1000000"))
    folder = os.path.join(work, "huge")
    started = time.time()
    made = run(logtool, "generate", "--stores", "10", "--objects", "1000", "--changes", str(count), "--changes-per-event", "1",
               "--encoding", "binary", "--seed", "11", folder)
    print("generated %d events in %.1f s" % (count, time.time() - started))
    check(made.returncode == 0, "generate %d events: %s" % (count, made.stderr))
    page = os.path.join(work, "huge.html")
    started = time.time()
    made = run(logtool, "timeline", os.path.join(folder, "cloud"), "-o", page)
    check(made.returncode == 0, "timeline of %d events: %s" % (count, made.stderr))
    print("timeline of %d events written in %.1f s (%d bytes)" % (count, time.time() - started, os.path.getsize(page)))
    started = time.time()
    driver.get("file://" + page)
    print("page of %d events loaded in %.2f s" % (count, time.time() - started))
    check(script_ran(driver), "the page's script ran on %d events" % count)
    check(console_errors(driver) == [], "no console errors on %d events: %s" % (count, console_errors(driver)[:3]))
    started = time.time()
    driver.execute_script(
        "var s=document.querySelector('svg.timeline');for(var i=0;i<60;i++)s.dispatchEvent(new WheelEvent('wheel',{deltaY:-1,clientX:400,bubbles:true,cancelable:true}));")
    print("60 zoom steps on %d events in %.2f s" % (count, time.time() - started))
    check(len(driver.find_elements(By.CSS_SELECTOR, "circle.mark")) > 0, "zooming in on %d events draws single events" % count)
    check(console_errors(driver) == [], "no console errors after zooming %d events" % count)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    logtool = sys.argv[1]
    # chromium's helper processes may still be closing files in the profile after quit().
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as work:
        driver = browser(work)
        try:
            fixture_page(logtool, driver, work)
            markup_names(logtool, driver, work)
            far_timestamps(logtool, driver, work)
            large_page(logtool, driver, work)
            if os.environ.get("LOGTOOL_TIMELINE_HUGE") == "1":
                huge_page(logtool, driver, work)
        finally:
            driver.quit()
    print("timeline browser test: %d failure(s)" % len(failures))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
