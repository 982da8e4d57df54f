#!/usr/bin/env python3
"""Simulation of the cures for a lost revision (issue 38 item 3; Spec/repair.md 8 and 9).

A model of Ensembles 1.x devices, written from Spec/repair.md section 8 (which names the 1.x file
of each fact), not from merge.md 15: each device holds an event store (events and baselines), the
app's persistent store (objects by global identifier: attributes, to-one and to-many
relationships) and the identifier of the baseline its store was built from. A merge (8.1) imports
the cloud files it has no alias for (8.2), consolidates its baselines by revision-set dominance
(8.6), deletes the events its baseline covers, integrates (8.3: in full when the baseline's unique
identifier changed or no merge event of its own dominates the baseline; else the window of 8.5,
widened to concurrent events) after the checks of 8.5 that fail the whole merge (201, then 200),
then exports its own events and its baseline and removes from the cloud every file it does not
hold. A full integration applies onto the store as it is and sweeps, per entity a replayed change
names, the objects no replayed insert named (8.3). Not modelled: data files (210), model versions
(204), registrations (205), rebasing, inverse relationships, multipart files.

Histories are drawn by a seeded generator in the style of device-mode-differential.py's `draw`,
but as a history of devices rather than of files, so that each device's own state is known: 3-5
stores, each with one device; devices save (inserts listing every property, updates, deletes),
merge, join late (a leech baseline naming only their store) and stop merging at different points;
then one or two save events are lost for good (deleted from the cloud, and their store's device
leaves, 8.5). Devices that imported a lost event before it went are its holders.

Candidates (repair.md 9):
  9.1-same   placeholder event per lost revision, with the lost event's global count (its name)
  9.1-new    placeholder event per lost revision, with a new global count (max + 1)
  9.2        a baseline of the salvage state, as repair.md 9.2 states it: every property of each
             object's entity listed, each to-many change listing every live non-member of the
             destination entity as removed, every store at its latest revision, global count and
             timestamp no smaller than any in the folder; covered events and dominated baselines
             quarantined
  9.2-bare   9.2 without the two listing rules (only non-null attributes and members added): shows
             that limits (1) and (2) of 9.2 are real
  9.2-marker 9.2 plus, for each entity of the model that no object of the salvage state has, one
             delete change of an identifier no object has, so that a full integration names the
             entity and sweeps it (limit (3))
  9.2-named  as 9.2-marker, with only the entities that a readable file names (no model given)
  9.2-again  9.2-marker, then, once the devices are quiet, a second cure of the folder as it then
             is when it shows a revision missing again or events above the cure made before it by
             two or more stores (repair.md 9.3 rule 7); at most three cures
  9.5-restore the lost events that a device still holds put back into events/ as that device holds
             them (repair.md 9.5; no baseline)
  9.5-again  9.2-again made on the folder with those events put back: their changes go into the
             cure (repair.md 3.6.6)
For each seed: every device merges once on the damaged folder (who is stuck, on what); then the
cure is applied and the devices merge round-robin (seeded order) until a round changes nothing.
Converged: no device's merge fails, and every device's store equals the expected state (the
salvage state, then the events devices exported after the cure, replayed in merge order; after a
second cure, that cure's salvage state and the events exported after it).

Usage:
  cure-simulation.py [--seeds FIRST COUNT | --count COUNT] [--fixtures-only] [--verbose]
      (--verbose adds a line per seed: the lost events and, per device, holder or not, stuck on
      what or ok before the cure; and a line per candidate that does not converge on it)
      The six hand fixtures (each checks who is stuck before, who holds a lost event and which
      candidates converge, as derived by hand in its docstring), then seeds FIRST..FIRST+COUNT-1
      (default: 1 300 and the five seeds of RULE7_SEEDS; --count COUNT: 1 COUNT and those five,
      as scripts/test runs it). Prints one line per candidate: seeds
      converged / not (also among the seeds with a stuck device), how many 9.2 failures are
      limit (3) alone, and the first counter-example. Exit 0 when every fixture gives its hand-derived outcome and 9.2-again
      converges on every seed, 1 otherwise, 2 on a usage error.
  cure-simulation.py --write-case SEED DIR
      Writes the seed's damaged history: DIR/cloud/E (an ensemble folder of v2 JSON files:
      stores/, events/, baselines/), DIR/devices.json (every device's event store, app store and
      built-from identifier), DIR/expected.json (the salvage state, {gid: {entity, values}}) and
      DIR/Model.xcdatamodel (the model's entities, for a cure given --model). Exit 0. The salvage
      state is this model's (1.x rules, repair.md 8); the toolkit's follows merge.md, which differs
      where repair.md 8.7 says (these histories never insert an object twice and their concurrent
      baselines are empty leech baselines, which avoids most of those points). Where the two
      differ, --expected reports it; the verdict without --expected (no device stuck, all
      devices equal) does not depend on it.
  cure-simulation.py --cured-folder ENSEMBLE --devices DEVICES.json [--expected EXPECTED.json]
                    [--write-back]
      Checks a cure made by another tool (logtool repair --cure-lost --apply): reads the cured
      ensemble folder's stores/, events/ and baselines/ (v2 JSON, single files; whatever the cure
      moved to its quarantine is simply absent), runs the devices of DEVICES.json on it until a
      round of merges changes nothing (at most 12 rounds) and prints one line per device,
      `device STORE: ok|stuck CODE DETAIL, store equal to|differs from the first device's`, then,
      when the folder shows a missing revision again, `the folder now shows missing revisions:
      STORE/REV, ... (cure it again)`, when it holds events made before the cure by two or more
      stores, `the folder now holds events made before the cure by STORE, ... (cure it again)`
      (repair.md 9.3 rule 7), and last `converged (N rounds)` or `not converged: REASONS`.
      With --expected, every device's final state must also equal EXPECTED with the events the
      devices exported meanwhile replayed on it. --write-back writes the folder (events/ and
      baselines/), DEVICES.json and EXPECTED.json as the devices left them, so that the cure can
      be run again and checked again (repair.md 9.3 rule 7, a second cure). Exit 0 converged, 1 not,
      2 usage or unreadable input.
  cure-simulation.py --apply-python-cure ENSEMBLE QUARANTINE
      This script's own cure (9.2 with every entity of its model named), on a folder written by
      --write-case: the baseline written into baselines/, the files it covers moved below
      QUARANTINE. For checking the --cured-folder mode, and as a reference for the Swift cure.

Runtime: 13 to 26 s of CPU for the fixtures and the 305 default seeds on one core (printed at the
end; the range is the shared test machine's); seeds 1..2000 take about 160 s.
"""
import copy
import importlib.util
import json
import os
import random
import sys
import time
import uuid

# The model: entity -> property -> kind ("a" attribute, ("1", dest) to-one, ("m", dest) to-many).
SCHEMA = {
    "Item": {"title": "a", "note": "a", "tag": ("1", "Tag"), "parts": ("m", "Part")},
    "Tag": {"name": "a"},
    "Part": {"label": "a"},
    "Memo": {"text": "a"},
}
INSERT, UPDATE, DELETE = 100, 200, 300
BASELINE, SAVE, MERGE = 100, 200, 300


# ---------------------------------------------------------------------------------------------
# Events (the v2 JSON shape, v2-json.md 5, used as the in-memory form too)

def event_name(ev):
    """cloud-layout.md 1: events/<gc>_<store>_<rev>, baselines/<gc>_<uid>_<store prefix>."""
    if ev["type"] == BASELINE:
        return "%d_%s_%s.cdeevent" % (ev["globalCount"], ev["uniqueIdentifier"], ev["storeIdentifier"][:8])
    return "%d_%s_%d.cdeevent" % (ev["globalCount"], ev["storeIdentifier"], revision(ev))


def revision(ev):
    return ev["revisionsByStoreIdentifier"][ev["storeIdentifier"]]


def order_key(ev):
    """CDERevisionManager.m sortStoreModificationEvents: global count, timestamp, store."""
    return (ev["globalCount"], float(ev["timestamp"]), ev["storeIdentifier"])


def changes_of(ev):
    for entity in sorted(ev.get("changesByEntity", {})):
        for oc in ev["changesByEntity"][entity]:
            yield entity, oc


def dominates(a, b):
    """CDERevisionSet.m compare: a is Descending from b (a names every store of b, each at least as
    high, and they are not equal)."""
    if any(s not in a or a[s] < r for s, r in b.items()):
        return False
    return a != b


def storewise(sets, op):
    out = {}
    for s in sets:
        for k, v in s.items():
            out[k] = op(out[k], v) if k in out else v
    return out


# ---------------------------------------------------------------------------------------------
# The app's store and how 1.x applies changes to it (repair.md 8.3, CDEEventIntegrator.m)

def new_object(entity):
    return {"entity": entity, "values": {}}


def normal(app):
    """The store as comparable data: every property of each object's entity, defaults filled in."""
    out = {}
    for gid, obj in app.items():
        vals = {}
        for p, kind in SCHEMA[obj["entity"]].items():
            v = obj["values"].get(p)
            vals[p] = sorted(v or ()) if kind[0] == "m" else v
        out[gid] = {"entity": obj["entity"], "values": vals}
    return out


def delete_object(app, gid):
    """nullifyRelationshipsAndDeleteObject: the object goes, and every reference to it."""
    app.pop(gid, None)
    for obj in app.values():
        for p, v in obj["values"].items():
            if isinstance(v, set):
                v.discard(gid)
            elif v == gid and SCHEMA[obj["entity"]][p][0] == "1":
                obj["values"][p] = None


def apply_event(app, ev, swept=None):
    """One event, as integrate: does: inserts of every entity first (an existing object is reused),
    then inserts and updates set their listed properties (in change-type order: an insert's to-many
    change adds and removes like an update's), then deletes. swept (full integration) collects,
    per entity a change names, the identifiers inserts named."""
    by_entity = {}
    for entity, oc in changes_of(ev):
        by_entity.setdefault(entity, []).append(oc)
    for entity, ocs in by_entity.items():
        if swept is not None:
            swept.setdefault(entity, set())
        for oc in ocs:
            if oc["type"] == INSERT:
                if oc["globalIdentifier"] not in app:
                    app[oc["globalIdentifier"]] = new_object(entity)
                if swept is not None:
                    swept[entity].add(oc["globalIdentifier"])
    for entity, ocs in by_entity.items():
        for oc in sorted((o for o in ocs if o["type"] in (INSERT, UPDATE)), key=lambda o: o["type"]):
            obj = app.get(oc["globalIdentifier"])
            if obj is None or obj["entity"] != entity:
                continue  # an update of an object the store does not have is dropped
            for pc in oc.get("properties", []):
                name = pc["propertyName"]
                if pc["type"] == 0:
                    obj["values"][name] = pc.get("value")
                elif pc["type"] == 1:
                    rel = pc.get("relatedIdentifier")
                    obj["values"][name] = rel if rel in app else None
                else:
                    members = obj["values"].setdefault(name, set())
                    members |= {g for g in pc.get("addedIdentifiers", []) if g in app}
                    members -= set(pc.get("removedIdentifiers", []))
    for entity, ocs in by_entity.items():
        for oc in ocs:
            if oc["type"] == DELETE and oc["globalIdentifier"] in app:
                delete_object(app, oc["globalIdentifier"])


def sweep(app, swept):
    """deleteUnreferencedObjectsInObjectIDsByEntity: per entity named, objects no insert named."""
    for entity, kept in swept.items():
        for gid in [g for g, o in app.items() if o["entity"] == entity and g not in kept]:
            delete_object(app, gid)


def replay(events, app=None):
    """A rebuild: the events applied in the order given onto a copy of app (or an empty store)."""
    app = copy.deepcopy(app) if app else {}
    for ev in events:
        apply_event(app, ev)
    return app


# ---------------------------------------------------------------------------------------------
# Baselines: consolidation (repair.md 8.6, CDEBaselineConsolidator.m) and the salvage state

def merge_baseline_changes(newest, others):
    """The newest's object changes win; properties it lacks are copied; to-many unioned."""
    objs = {}
    for entity, oc in changes_of(newest):
        objs[oc["globalIdentifier"]] = (entity, copy.deepcopy(oc))
    for other in others:
        for entity, oc in changes_of(other):
            gid = oc["globalIdentifier"]
            if gid not in objs:
                objs[gid] = (entity, copy.deepcopy(oc))
                continue
            mine = {p["propertyName"]: p for p in objs[gid][1].setdefault("properties", [])}
            for pc in oc.get("properties", []):
                if pc["propertyName"] not in mine:
                    objs[gid][1]["properties"].append(copy.deepcopy(pc))
                elif pc["type"] in (2, 3):
                    m = mine[pc["propertyName"]]
                    m["addedIdentifiers"] = sorted(set(m.get("addedIdentifiers", [])) | set(pc.get("addedIdentifiers", [])))
    out = {}
    for gid in sorted(objs):
        entity, oc = objs[gid]
        out.setdefault(entity, []).append(oc)
    return out


def consolidate(baselines, own_store, now, uid):
    """Returns (kept baseline, names deleted). Newest first by (gc, timestamp, store); a baseline
    another dominates goes, of equal sets the older goes; concurrent survivors are merged into the
    newest, which gets a new identifier, the timestamp now and the store-wise maximum set with its
    own store set to the consolidating device's (at the revision the maximum gives, or 0)."""
    ordered = sorted(baselines.items(), key=lambda kv: order_key(kv[1]), reverse=True)
    survivors = []
    for name, b in ordered:
        sets = [o["revisionsByStoreIdentifier"] for _, o in ordered if o is not b]
        if any(dominates(s, b["revisionsByStoreIdentifier"]) for s in sets):
            continue
        if any(o["revisionsByStoreIdentifier"] == b["revisionsByStoreIdentifier"] for _, o in survivors):
            continue  # an equal set, newer, survives already
        survivors.append((name, b))
    if len(survivors) <= 1:
        keep = survivors[0] if survivors else None
        return keep, [n for n in baselines if keep is None or n != keep[0]]
    newest = survivors[0][1]
    merged = dict(newest)
    merged["changesByEntity"] = merge_baseline_changes(newest, [b for _, b in survivors[1:]])
    revs = storewise([b["revisionsByStoreIdentifier"] for _, b in survivors], max)
    revs[own_store] = revs.get(own_store, 0)
    merged.update(uniqueIdentifier=uid, timestamp="%.1f" % now, revisionsByStoreIdentifier=revs, storeIdentifier=own_store)
    return (event_name(merged), merged), list(baselines)


def cloud_baseline(cloud):
    """The baseline every device ends with from the cloud's baselines (consolidation as a device
    does, its own store taken as the newest's)."""
    if not cloud["baselines"]:
        return None
    newest = max(cloud["baselines"].values(), key=order_key)
    keep, _ = consolidate(cloud["baselines"], newest["storeIdentifier"], float(newest["timestamp"]), newest["uniqueIdentifier"])
    return keep[1] if keep else None


def covered(ev, base):
    return base is not None and revision(ev) <= base["revisionsByStoreIdentifier"].get(ev["storeIdentifier"], -1)


def salvage(cloud):
    """The salvage state: the cloud's baseline, then every readable event it does not cover, in
    merge order (the lost ones are absent: they are not in the cloud)."""
    base = cloud_baseline(cloud)
    events = sorted((e for e in cloud["events"].values() if not covered(e, base)), key=order_key)
    return replay(([base] if base else []) + events)


# ---------------------------------------------------------------------------------------------
# A 1.x device (repair.md 8)

class Stuck(Exception):
    def __init__(self, code, detail):
        Exception.__init__(self, "%d %s" % (code, detail))
        self.code, self.detail = code, detail


class Device:
    def __init__(self, store):
        self.store = store
        self.events = {}      # name -> event (save and merge events of every store)
        self.baselines = {}   # name -> baseline
        self.app = {}
        self.built_from = None
        self.last_merge_rev = None   # lastMergeRevisionSaved
        self.last_rev = 0            # lastRevisionSaved of its own store
        self.log = []

    def to_json(self):
        app = {g: {"entity": o["entity"], "values": {p: sorted(v) if isinstance(v, set) else v for p, v in o["values"].items()}}
               for g, o in self.app.items()}
        return {"store": self.store, "events": sorted(self.events.values(), key=event_name),
                "baselines": sorted(self.baselines.values(), key=event_name), "app": app,
                "builtFrom": self.built_from, "lastMergeRevision": self.last_merge_rev, "lastRevision": self.last_rev}

    @staticmethod
    def from_json(doc):
        d = Device(doc["store"])
        d.events = {event_name(e): e for e in doc["events"]}
        d.baselines = {event_name(b): b for b in doc["baselines"]}
        d.app = {g: {"entity": o["entity"], "values": {p: set(v) if SCHEMA[o["entity"]][p][0] == "m" else v for p, v in o["values"].items()}}
                 for g, o in doc["app"].items()}
        d.built_from, d.last_merge_rev, d.last_rev = doc["builtFrom"], doc["lastMergeRevision"], doc["lastRevision"]
        return d

    # -- what the device holds --
    def baseline(self):
        return max(self.baselines.values(), key=order_key) if self.baselines else None

    def max_gc(self):
        return max([e["globalCount"] for e in self.events.values()] + [b["globalCount"] for b in self.baselines.values()] + [0])

    def lookup(self, store, rev):
        """fetchNonBaselineEventForPersistentStoreIdentifier: one event, or None (none or several)."""
        found = [e for e in self.events.values() if e["storeIdentifier"] == store and revision(e) == rev]
        return found[0] if len(found) == 1 else None

    def aliases(self):
        """CDEEventFile.m aliases: a local event's name; a local baseline's name with and without
        its store prefix."""
        names = set(self.events)
        for b in self.baselines.values():
            names.add(event_name(b))
            names.add("%d_%s.cdeevent" % (b["globalCount"], b["uniqueIdentifier"]))
        return names

    # -- saving --
    def save(self, changes, now):
        base = self.baseline()
        last_merge = self.lookup(self.store, self.last_merge_rev) if self.last_merge_rev is not None else None
        revs = dict(last_merge["revisionsByStoreIdentifier"] if last_merge else (base["revisionsByStoreIdentifier"] if base else {}))
        self.last_rev += 1
        revs[self.store] = self.last_rev
        ev = {"changesByEntity": changes, "globalCount": self.max_gc() + 1, "revisionsByStoreIdentifier": revs,
              "storeIdentifier": self.store, "timestamp": "%.1f" % now, "type": SAVE,
              "uniqueIdentifier": "%s-s%d" % (self.store, self.last_rev)}
        self.events[event_name(ev)] = ev
        apply_event(self.app, ev)
        return ev

    # -- a merge (8.1) --
    def merge(self, cloud, now):
        """Raises Stuck when the merge fails; returns True when it changed the device or the cloud."""
        before = self.fingerprint(cloud)
        local = self.aliases()
        held_keys = {(e["globalCount"], e["storeIdentifier"], revision(e)) for e in self.events.values()}
        held_bkeys = {(b["globalCount"], b["uniqueIdentifier"], b["storeIdentifier"][:8]) for b in self.baselines.values()}
        for name, b in sorted(cloud["baselines"].items()):
            if name not in local and (b["globalCount"], b["uniqueIdentifier"], b["storeIdentifier"][:8]) not in held_bkeys:
                self.baselines[name] = copy.deepcopy(b)
        keep, dropped = consolidate(self.baselines, self.store, now, "%s-c%d" % (self.store, int(now * 10)))
        for n in dropped:
            self.baselines.pop(n, None)
        if keep and keep[0] not in self.baselines:
            self.baselines[keep[0]] = keep[1]
        for name, e in sorted(cloud["events"].items()):
            if name not in local and (e["globalCount"], e["storeIdentifier"], revision(e)) not in held_keys:
                self.events[name] = copy.deepcopy(e)
        base = self.baseline()
        for name in [n for n, e in self.events.items() if covered(e, base)]:
            del self.events[name]   # CDERebaser.m deleteEventsPrecedingBaselineWithCompletion:
        self.integrate(base, now)
        # export: own events, own baseline; then remove from the cloud what the device does not hold
        for name, e in self.events.items():
            if e["storeIdentifier"] == self.store and name not in cloud["events"]:
                cloud["events"][name] = copy.deepcopy(e)
        if base is not None and event_name(base) not in cloud["baselines"]:
            cloud["baselines"][event_name(base)] = copy.deepcopy(base)
        for name in [n for n in cloud["events"] if n not in self.events]:
            del cloud["events"][name]
        for name in [n for n in cloud["baselines"] if n not in self.baselines]:
            del cloud["baselines"][name]
        return self.fingerprint(cloud) != before

    def fingerprint(self, cloud):
        return json.dumps([sorted(self.events), sorted(self.baselines), normal(self.app), self.built_from,
                           self.last_merge_rev, sorted(cloud["events"]), sorted(cloud["baselines"])], sort_keys=True)

    def needs_full(self, base):
        """CDEEventIntegrator.m needsFullIntegration; CDERevisionManager.m
        checkThatLocalPersistentStoreHasNotBeenAbandoned:."""
        if base is None:
            return False
        if self.built_from != base["uniqueIdentifier"]:
            return True
        merges = [e for e in self.events.values() if e["storeIdentifier"] == self.store and e["type"] == MERGE]
        return not any(dominates(e["revisionsByStoreIdentifier"], base["revisionsByStoreIdentifier"]) for e in merges)

    def store_ids(self):
        ids = set()
        for e in list(self.events.values()) + list(self.baselines.values()):
            ids |= set(e["revisionsByStoreIdentifier"])
        return ids

    def since(self, store, rev):
        return [e for e in self.events.values() if e["storeIdentifier"] == store and revision(e) > rev]

    def window(self, base):
        """fetchUncommittedStoreModificationEvents:, then recursively the concurrent events."""
        base_revs = base["revisionsByStoreIdentifier"] if base else {}
        last_merge = self.lookup(self.store, self.last_merge_rev) if self.last_merge_rev is not None else None
        start = last_merge["revisionsByStoreIdentifier"] if last_merge else base_revs
        found = {}
        for s, r in start.items():
            found.update((id(e), e) for e in self.since(s, r))
        for s in self.store_ids() - set(start):
            found.update((id(e), e) for e in self.since(s, base_revs.get(s, -1)))
        while found:
            size = len(found)
            low = storewise([e["revisionsByStoreIdentifier"] for e in found.values()], min)
            for s, r in low.items():
                found.update((id(e), e) for e in self.since(s, r))
            for s in self.store_ids() - set(low):
                found.update((id(e), e) for e in self.since(s, base_revs.get(s, -1)))
            if len(found) == size:
                break
        return sorted(found.values(), key=order_key)

    def check(self, window, base):
        """checkIntegrationPrerequisitesForEvents: dependencies (201), then continuity (200)."""
        base_revs = base["revisionsByStoreIdentifier"] if base else {}
        for e in window:
            if e["type"] == BASELINE:
                continue
            for s, r in sorted(e["revisionsByStoreIdentifier"].items()):
                if s == e["storeIdentifier"] or (s in base_revs and base_revs[s] >= r):
                    continue
                if self.lookup(s, r) is None:
                    raise Stuck(201, "%s names %s/%d" % (event_name(e), s, r))
        for s in sorted({e["storeIdentifier"] for e in window if e["type"] != BASELINE}):
            revs = sorted(revision(e) for e in window if e["type"] != BASELINE and e["storeIdentifier"] == s)
            for a, b in zip(revs, revs[1:]):
                if b - a > 1:
                    raise Stuck(200, "%s: %d then %d" % (s, a, b))

    def integrate(self, base, now):
        full = self.needs_full(base)
        if full:
            window = ([base] if base else []) + sorted(self.events.values(), key=order_key)
        else:
            window = self.window(base)
            if not window:
                self.built_from = base["uniqueIdentifier"] if base else None
                return
        self.check(window, base)
        stores = {e["storeIdentifier"] for e in window}
        applies = True
        if not full and stores == {self.store}:
            applies = False  # "If all events are from this device, don't merge"
        if not any(True for e in window for _ in changes_of(e)):
            applies = False  # "If there are no object changes, don't merge"
        if applies:
            before = normal(self.app)
            swept = {} if full else None
            for e in window:
                apply_event(self.app, e, swept)
            if full:
                sweep(self.app, swept)
            if normal(self.app) != before:   # hasChanges: a merge event of the device's store
                revs = storewise([e["revisionsByStoreIdentifier"] for e in self.events.values()]
                                 + [b["revisionsByStoreIdentifier"] for b in self.baselines.values()], max)
                self.last_rev += 1
                revs[self.store] = self.last_rev
                m = {"globalCount": self.max_gc() + 1, "revisionsByStoreIdentifier": revs, "storeIdentifier": self.store,
                     "timestamp": "%.1f" % now, "type": MERGE, "uniqueIdentifier": "%s-m%d" % (self.store, self.last_rev)}
                self.events[event_name(m)] = m
                self.last_merge_rev = self.last_rev
        self.built_from = base["uniqueIdentifier"] if base else None


# ---------------------------------------------------------------------------------------------
# Damaged histories (seeded, in the style of device-mode-differential.py's draw)

class Clock:
    def __init__(self):
        self.t = 100.0

    def tick(self):
        self.t += 1.0
        return self.t


def full_insert(rng, app, entity, gid):
    props = []
    for p, kind in sorted(SCHEMA[entity].items()):
        if kind == "a":
            props.append({"propertyName": p, "type": 0, "value": rng.choice((None, "%s-%d" % (p, rng.randint(0, 9))))})
        elif kind[0] == "1":
            dest = sorted(g for g, o in app.items() if o["entity"] == kind[1])
            props.append({"propertyName": p, "type": 1, "relatedIdentifier": rng.choice(dest + [None]) if dest else None})
        else:
            dest = sorted(g for g, o in app.items() if o["entity"] == kind[1])
            props.append({"propertyName": p, "type": 2, "addedIdentifiers": sorted(rng.sample(dest, rng.randint(0, min(2, len(dest))))),
                          "removedIdentifiers": []})
    return {"globalIdentifier": gid, "type": INSERT, "properties": props}


def draw_changes(rng, app, fresh):
    """One save's object changes on the device's store: inserts list every property."""
    out = {}
    for _ in range(rng.randint(1, 3)):
        live = sorted(app)
        r = rng.random()
        if r < 0.35 or not live:
            entity = rng.choice(("Item", "Item", "Tag", "Part", "Part", "Memo"))
            oc = full_insert(rng, app, entity, fresh(entity))
        elif r < 0.85:
            gid = rng.choice(live)
            entity = app[gid]["entity"]
            props = []
            for p in rng.sample(sorted(SCHEMA[entity]), rng.randint(1, len(SCHEMA[entity]))):
                kind = SCHEMA[entity][p]
                if kind == "a":
                    props.append({"propertyName": p, "type": 0, "value": rng.choice((None, "%s-%d" % (p, rng.randint(0, 99))))})
                elif kind[0] == "1":
                    dest = sorted(g for g, o in app.items() if o["entity"] == kind[1])
                    props.append({"propertyName": p, "type": 1, "relatedIdentifier": rng.choice(dest + [None])})
                else:
                    dest = sorted(g for g, o in app.items() if o["entity"] == kind[1])
                    have = sorted(app[gid]["values"].get(p, set()))
                    props.append({"propertyName": p, "type": 2,
                                  "addedIdentifiers": sorted(rng.sample(dest, rng.randint(0, min(2, len(dest))))),
                                  "removedIdentifiers": sorted(rng.sample(have, rng.randint(0, len(have))))})
            oc = {"globalIdentifier": gid, "type": UPDATE, "properties": props}
        else:
            gid = rng.choice(live)
            entity = app[gid]["entity"]
            oc = {"globalIdentifier": gid, "type": DELETE}
        if any(o["globalIdentifier"] == oc["globalIdentifier"] for arr in out.values() for o in arr):
            continue
        out.setdefault(entity, []).append(oc)
        tmp = {"changesByEntity": {entity: [oc]}}
        apply_event(app, tmp)  # later changes of the same save see this one
    return out


def draw_history(rng):
    """Returns a case: {cloud, devices, lost, stores}. Devices run a history of saves and merges,
    some join late, some stop merging; then one or two save events are lost for good."""
    clock = Clock()
    names = ["STORE-%s" % (c * 2) for c in "ABCDE"][: rng.choice((3, 4, 4, 5))]
    first = names[: rng.randint(2, len(names) - 1)]
    counter = {"n": 0}

    def fresh(entity):
        counter["n"] += 1
        return "%s%d" % (entity[0], counter["n"])

    app0 = {}
    base_changes = {}
    for entity in ("Tag", "Part", "Item", "Item"):
        if rng.random() < 0.8:
            oc = full_insert(rng, app0, entity, fresh(entity))
            base_changes.setdefault(entity, []).append(oc)
            apply_event(app0, {"changesByEntity": {entity: [oc]}})
    base0 = {"changesByEntity": base_changes, "globalCount": 1, "revisionsByStoreIdentifier": {s: 0 for s in first},
             "storeIdentifier": first[0], "timestamp": "%.1f" % clock.tick(), "type": BASELINE, "uniqueIdentifier": "BASE0"}
    cloud = {"events": {}, "baselines": {event_name(base0): copy.deepcopy(base0)}, "stores": set(first)}
    devices = {}
    for s in first:
        d = Device(s)
        d.baselines[event_name(base0)] = copy.deepcopy(base0)
        d.app = replay([base0])
        d.built_from = "BASE0"
        devices[s] = d
    waiting = names[len(first):]
    stopped, lost, gone = set(), [], set()
    steps = rng.randint(12, 30)
    loss_at = sorted(rng.sample(range(steps // 3, steps), 1 if rng.random() < 0.7 else 2))

    def lose(step):
        # a save event with changes, exported, whose store's device then leaves (8.5)
        candidates = [e for e in cloud["events"].values() if e["type"] == SAVE and e["storeIdentifier"] in devices
                      and e["storeIdentifier"] not in gone and e.get("changesByEntity")]
        if not candidates:
            return
        e = rng.choice(sorted(candidates, key=event_name))
        del cloud["events"][event_name(e)]
        gone.add(e["storeIdentifier"])
        lost.append(e)

    for step in range(steps):
        if step in loss_at:
            lose(step)
        active = [s for s in sorted(devices) if s not in stopped and s not in gone]
        r = rng.random()
        if waiting and r < 0.12:
            s = waiting.pop(0)  # a late joiner leeches: a baseline of its (empty) store, gc 0
            d = Device(s)
            leech = {"changesByEntity": {}, "globalCount": 0, "revisionsByStoreIdentifier": {s: 0}, "storeIdentifier": s,
                     "timestamp": "-1000.0", "type": BASELINE, "uniqueIdentifier": "LEECH%s" % s[-2:]}
            d.baselines[event_name(leech)] = leech
            d.built_from = leech["uniqueIdentifier"]
            cloud["stores"].add(s)
            devices[s] = d
            try:
                d.merge(cloud, clock.tick())
            except Stuck:
                pass
            continue
        if not active:
            continue
        d = devices[rng.choice(active)]
        if r < 0.55:
            d.save(draw_changes(rng, copy.deepcopy(d.app), fresh), clock.tick())
        else:
            try:
                d.merge(cloud, clock.tick())
            except Stuck:
                pass
        if rng.random() < 0.04 and len(active) > 2:
            stopped.add(d.store)  # this device stops merging for a while (it is offline)
    if not lost:  # no save of a store still there was exported: one is made, exported and lost
        s = sorted(x for x in devices if x not in gone)[0]
        devices[s].save(draw_changes(rng, copy.deepcopy(devices[s].app), fresh), clock.tick())
        try:
            devices[s].merge(cloud, clock.tick())
        except Stuck:
            cloud["events"].update((n, copy.deepcopy(e)) for n, e in devices[s].events.items() if e["storeIdentifier"] == s)
        lose(steps)
    # every device that is still there merges once more (some get stuck here), then saves sometimes
    for s in sorted(devices):
        if s in gone:
            continue
        try:
            devices[s].merge(cloud, clock.tick())
        except Stuck:
            pass
        if rng.random() < 0.3:
            devices[s].save(draw_changes(rng, copy.deepcopy(devices[s].app), fresh), clock.tick())
    live = {s: d for s, d in devices.items() if s not in gone}
    return {"cloud": cloud, "devices": live, "lost": lost, "clock": clock}


# ---------------------------------------------------------------------------------------------
# The candidate cures (repair.md 9.1 and 9.2)

def all_files(cloud):
    return list(cloud["events"].values()) + list(cloud["baselines"].values())


def cure_placeholder(cloud, lost, same_count):
    """9.1: per lost revision A/r, an event of A at r with no object changes, a revision set naming
    only A/r, and the lost event's global count (its very name) or a new one."""
    cloud = copy.deepcopy(cloud)
    top = max(e["globalCount"] for e in all_files(cloud))
    for i, e in enumerate(sorted(lost, key=event_name)):
        ph = {"globalCount": e["globalCount"] if same_count else top + 1 + i,
              "revisionsByStoreIdentifier": {e["storeIdentifier"]: revision(e)}, "storeIdentifier": e["storeIdentifier"],
              "timestamp": e["timestamp"], "type": SAVE, "uniqueIdentifier": "PLACEHOLDER%d" % i}
        cloud["events"][event_name(ph)] = ph
    return cloud, []


def cure_baseline(cloud, variant="full", uid="CURE1"):
    """9.2: returns (cured cloud, quarantined names). variant: full (as repair.md 9.2 states it),
    bare (without listing every property and every non-member), marker (full plus a delete change
    of an unused identifier for each entity no object of the salvage state has)."""
    state = salvage(cloud)
    changes = {}
    for gid in sorted(state):
        obj = state[gid]
        props = []
        for p, kind in sorted(SCHEMA[obj["entity"]].items()):
            v = obj["values"].get(p)
            if kind == "a":
                if variant != "bare" or v is not None:
                    props.append({"propertyName": p, "type": 0, "value": v})
            elif kind[0] == "1":
                if variant != "bare" or v is not None:
                    props.append({"propertyName": p, "type": 1, "relatedIdentifier": v})
            else:
                members = sorted(v or ())
                others = sorted(g for g, o in state.items() if o["entity"] == kind[1] and g not in (v or ()))
                if variant == "bare":
                    if members:
                        props.append({"propertyName": p, "type": 2, "addedIdentifiers": members})
                else:
                    props.append({"propertyName": p, "type": 2, "addedIdentifiers": members, "removedIdentifiers": others})
        changes.setdefault(obj["entity"], []).append({"globalIdentifier": gid, "type": INSERT, "properties": props})
    if variant in ("marker", "named"):
        # marker: every entity of the model; named: only those a readable file names (no model)
        entities = SCHEMA if variant == "marker" else entities_named(all_files(cloud))
        for entity in sorted(entities):
            if entity not in changes:
                changes[entity] = [{"globalIdentifier": "CURE-NONE-%s" % entity, "type": DELETE}]
    revs = {s: 0 for s in cloud["stores"]}
    for e in all_files(cloud):
        for s, r in e["revisionsByStoreIdentifier"].items():
            revs[s] = max(revs.get(s, 0), r, 0)
    files = all_files(cloud)
    cure = {"changesByEntity": changes, "globalCount": max(e["globalCount"] for e in files),
            "revisionsByStoreIdentifier": revs, "storeIdentifier": sorted(revs)[0],
            "timestamp": "%.1f" % (max(float(e["timestamp"]) for e in files) + 1), "type": BASELINE,
            "uniqueIdentifier": uid}
    out = copy.deepcopy(cloud)
    quarantined = [("events", n) for n, e in out["events"].items() if covered(e, cure)]
    quarantined += [("baselines", n) for n, b in out["baselines"].items()
                    if dominates(revs, b["revisionsByStoreIdentifier"]) or revs == b["revisionsByStoreIdentifier"]]
    for folder, n in quarantined:
        del out[folder][n]
    out["baselines"][event_name(cure)] = cure
    return out, sorted(quarantined)


def recovered(case):
    """The cloud with every lost event that a device still holds put back, as that device holds it
    (the first holder in store order; repair.md 9.5)."""
    cloud = copy.deepcopy(case["cloud"])
    for lost in case["lost"]:
        name = event_name(lost)
        for store in sorted(case["devices"]):
            held = case["devices"][store].events.get(name)
            if held is not None and held["uniqueIdentifier"] == lost["uniqueIdentifier"]:
                cloud["events"][name] = copy.deepcopy(held)
                break
    return cloud


# Each candidate: case -> (cured cloud, quarantined names, the cloud whose salvage state every device
# must reach). 9.5-restore and 9.5-again recover the lost events that a device still holds.
CANDIDATES = [
    ("9.1-same", lambda case: cure_placeholder(case["cloud"], case["lost"], True) + (case["cloud"],)),
    ("9.1-new", lambda case: cure_placeholder(case["cloud"], case["lost"], False) + (case["cloud"],)),
    ("9.2", lambda case: cure_baseline(case["cloud"], "full") + (case["cloud"],)),
    ("9.2-bare", lambda case: cure_baseline(case["cloud"], "bare") + (case["cloud"],)),
    ("9.2-marker", lambda case: cure_baseline(case["cloud"], "marker") + (case["cloud"],)),
    ("9.2-named", lambda case: cure_baseline(case["cloud"], "named") + (case["cloud"],)),
    ("9.2-again", lambda case: cure_baseline(case["cloud"], "marker") + (case["cloud"],)),
    ("9.5-restore", lambda case: (recovered(case), [], recovered(case))),
    ("9.5-again", lambda case: cure_baseline(recovered(case), "marker") + (recovered(case),)),
]


# ---------------------------------------------------------------------------------------------
# Running devices

def merge_once(device, cloud, now):
    """(changed, Stuck or None)"""
    before = device.fingerprint(cloud)
    try:
        device.merge(cloud, now)
        return device.fingerprint(cloud) != before, None
    except Stuck as exc:
        return device.fingerprint(cloud) != before, exc


def before_cure(case):
    """Each device's next merge on the damaged folder, alone: store -> Stuck or None."""
    out = {}
    for s, d in sorted(case["devices"].items()):
        _, err = merge_once(copy.deepcopy(d), copy.deepcopy(case["cloud"]), case["clock"].t + 1)
        out[s] = err
    return out


def run_until_quiet(cloud, devices, rng, clock, max_rounds=12):
    """Devices merge round-robin in a seeded order until a round changes nothing. Returns
    (errors of the last round, rounds, quiet, events exported meanwhile)."""
    start = set(cloud["events"])
    exported = {}
    order = sorted(devices)
    errors = {}
    for rounds in range(1, max_rounds + 1):
        rng.shuffle(order)
        changed, errors = False, {}
        for s in order:
            ch, err = merge_once(devices[s], cloud, clock.tick())
            changed |= ch
            if err:
                errors[s] = err
            for n, e in cloud["events"].items():
                if n not in start:
                    exported[n] = e
        if not changed:
            return errors, rounds, True, exported
    return errors, max_rounds, False, exported


def diff_states(a, b, limit=4):
    out = []
    for gid in sorted(set(a) | set(b)):
        if a.get(gid) != b.get(gid):
            out.append("%s: %s vs %s" % (gid, json.dumps(a.get(gid), sort_keys=True), json.dumps(b.get(gid), sort_keys=True)))
    return out[:limit] + (["... %d more" % (len(out) - limit)] if len(out) > limit else [])


def without_unnamed(state, expected, named):
    """state without its objects that the expected state lacks and whose entity is not in named,
    and without the references to them (what a sweep of those entities would have done)."""
    gone = {g for g, o in state.items() if g not in expected and o["entity"] not in named}
    out = {}
    for g, o in state.items():
        if g in gone:
            continue
        vals = {}
        for p, v in o["values"].items():
            vals[p] = [m for m in v if m not in gone] if isinstance(v, list) else (None if v in gone else v)
        out[g] = {"entity": o["entity"], "values": vals}
    return out


def entities_named(events):
    return {entity for e in events for entity, _ in changes_of(e)}


def evaluate(case, name, cure, seed):
    """Applies one candidate to a copy of the case and runs the devices. Returns a result dict."""
    cloud, quarantined, reachable = cure(case)
    devices = copy.deepcopy(case["devices"])
    clock = copy.deepcopy(case["clock"])
    rng = random.Random(seed * 7919 + 1)
    errors, rounds, quiet, exported = run_until_quiet(cloud, devices, rng, clock)
    cures, base_state = 1, salvage(reachable)
    while name.endswith("again") and (missing_in_cloud(cloud) or len(late_stores(cloud)) >= 2) and cures < 3:
        # the folder shows a revision missing again: the cure is run again on it as it now is; the
        # events exported since the first cure are then in its baseline, and those exported later
        # (by devices the first cure left stuck) come after it
        cures += 1
        base_state = salvage(cloud)
        cloud, more = cure_baseline(cloud, "marker", uid="CURE%d" % cures)
        quarantined += more
        errors, r2, quiet, exported = run_until_quiet(cloud, devices, rng, clock)
        rounds += r2
    post = sorted(exported.values(), key=order_key)
    expected = normal(replay(post, base_state))
    states = {s: normal(d.app) for s, d in devices.items()}
    problems = []
    if not quiet:
        problems.append("not quiet after %d rounds" % rounds)
    for s, err in sorted(errors.items()):
        problems.append("%s still stuck: %s" % (s, err))
    limit3 = False
    for s, st in sorted(states.items()):
        if st != expected:
            named = entities_named(b for b in cloud["baselines"].values() if b["uniqueIdentifier"].startswith("CURE"))
            if name.startswith("9.2") and without_unnamed(st, expected, named) == expected:
                limit3 = True  # objects of an entity no replayed change names (9.2 limit (3))
            problems.append("%s differs from the salvage state: %s" % (s, "; ".join(diff_states(st, expected))))
    converged = not problems
    same = len({json.dumps(st, sort_keys=True) for st in states.values()}) == 1
    return {"converged": converged, "problems": problems, "limit3": limit3 and not errors, "same": same,
            "rounds": rounds, "quarantined": quarantined, "cures": cures,
            "stuck after": {st: err.code for st, err in errors.items()}}


def late_stores(cloud):
    """Stores with an event above the cloud's baseline that was made before that baseline: its
    global count is not above the baseline's and its revision set names some store the baseline
    names at a lower revision, or not at all (a save a device made while it was stuck, exported
    after the cure; a rebase's kept events have greater global counts)."""
    base = cloud_baseline(cloud)
    if base is None:
        return set()
    cover = base["revisionsByStoreIdentifier"]
    out = set()
    for e in cloud["events"].values():
        if covered(e, base):
            continue
        revs = e["revisionsByStoreIdentifier"]
        if e["globalCount"] <= base["globalCount"] and any(st != e["storeIdentifier"] and revs.get(st, -1) < r for st, r in cover.items()):
            out.add(e["storeIdentifier"])
    return out


def missing_in_cloud(cloud):
    """What verify would report as a missing revision: per store, above the cloud baseline's
    revision for it, a revision some event names (its own or in its set) that no event has."""
    base = cloud_baseline(cloud)
    cover = base["revisionsByStoreIdentifier"] if base else {}
    present = {(e["storeIdentifier"], revision(e)) for e in cloud["events"].values()}
    top = {}
    for e in cloud["events"].values():
        for st, r in e["revisionsByStoreIdentifier"].items():
            top[st] = max(top.get(st, 0), r)
    return sorted((st, r) for st, t in top.items() for r in range(cover.get(st, 0) + 1, t + 1) if (st, r) not in present)


# ---------------------------------------------------------------------------------------------
# Hand-derived fixtures. Each builds its history step by step with the device model's own save
# and merge, then states by hand what must happen (derivations in the comments).

def attr(p, v):
    return {"propertyName": p, "type": 0, "value": v}


def fixture_start(stores, objects):
    """BASE0 (gc 1, every store at 0) holding objects [(entity, gid, props)]; one device per store."""
    clock = Clock()
    changes = {}
    for entity, gid, props in objects:
        changes.setdefault(entity, []).append({"globalIdentifier": gid, "type": INSERT, "properties": props})
    base0 = {"changesByEntity": changes, "globalCount": 1, "revisionsByStoreIdentifier": {s: 0 for s in stores},
             "storeIdentifier": stores[0], "timestamp": "%.1f" % clock.tick(), "type": BASELINE, "uniqueIdentifier": "BASE0"}
    cloud = {"events": {}, "baselines": {event_name(base0): copy.deepcopy(base0)}, "stores": set(stores)}
    devices = {}
    for s in stores:
        d = Device(s)
        d.baselines[event_name(base0)] = copy.deepcopy(base0)
        d.app = replay([base0])
        d.built_from = "BASE0"
        devices[s] = d
    return {"cloud": cloud, "devices": devices, "clock": clock, "lost": []}


def lose(case, name):
    """The event file is deleted for good and its store's device leaves (8.5)."""
    ev = case["cloud"]["events"].pop(name)
    case["lost"].append(ev)
    del case["devices"][ev["storeIdentifier"]]


A, B, C = "STORE-AA", "STORE-BB", "STORE-CC"
ITEM = [attr("note", None), {"propertyName": "parts", "type": 2, "addedIdentifiers": []},
        {"propertyName": "tag", "type": 1, "relatedIdentifier": None}, attr("title", "t0")]


def fixture_dependency():
    """A/1 sets I1.title "a1" (gc 2); B merges it (holder) and exports its merge event B/1 {A:1,
    B:1, C:0}; A/1 is lost. C's window is B/1, whose set names A at exactly 1, above BASE0: 201.
    Salvage: BASE0 + B/1 (no changes): I1.title "t0".
    9.1-same: the placeholder is named 2_STORE-AA_1, B's own name for A/1: B never imports it and
      keeps "a1"; C integrates it (no changes): "t0": B and C differ.
    9.1-new: B imports a second A/1; B's window starts above its merge event B/1 (A:1), so nothing
      asks for A/1 and B keeps "a1"; C: "t0": they differ.
    9.2 (every variant): the cure names A:1, B:1, C:0; both full-integrate it: "t0" on both.
    9.5-restore: B's copy of A/1 is put back; C imports it, its window B/1 now finds A/1 and it
      integrates A/1 then B/1: "a1" on both, the state with A/1. 9.5-again: the cure holds "a1"."""
    case = fixture_start([A, B, C], [("Item", "I1", ITEM)])
    d, cl, k = case["devices"], case["cloud"], case["clock"]
    d[A].save({"Item": [{"globalIdentifier": "I1", "type": UPDATE, "properties": [attr("title", "a1")]}]}, k.tick())
    d[A].merge(cl, k.tick())
    d[B].merge(cl, k.tick())
    lose(case, "2_STORE-AA_1.cdeevent")
    expect = {"stuck": {B: None, C: 201}, "holders": {B},
              "converged": {"9.1-same": False, "9.1-new": False, "9.2": True, "9.2-bare": True, "9.2-marker": True, "9.2-named": True, "9.2-again": True,
                            "9.5-restore": True, "9.5-again": True}}
    return case, expect


def fixture_listing():
    """Limits (1) and (2) of 9.2. BASE0: I1 (parts empty, note null), P1, P2. A/1 (lost) adds P1
    to I1.parts and sets I1.note "n". B holds and integrates it; C is stuck as in the first fixture
    (201). Salvage: I1.parts [], note null.
    9.2: the cure lists note: null and parts added [] removed [P1, P2]: B's full integration sets
      note null and removes P1: both equal the salvage state.
    9.2-bare: the cure lists neither: B keeps note "n" and member P1: not converged.
    9.2-marker: as 9.2 (Memo and Tag have no objects; the markers name them, nothing to sweep).
    9.5-restore and 9.5-again: B's A/1 comes back; C integrates it as in the first fixture, or the
      cure holds note "n" and parts [P1]: both end with them."""
    case = fixture_start([A, B, C], [("Part", "P1", [attr("label", "p1")]), ("Part", "P2", [attr("label", "p2")]),
                                     ("Item", "I1", ITEM)])
    d, cl, k = case["devices"], case["cloud"], case["clock"]
    d[A].save({"Item": [{"globalIdentifier": "I1", "type": UPDATE, "properties": [
        attr("note", "n"), {"propertyName": "parts", "type": 2, "addedIdentifiers": ["P1"]}]}]}, k.tick())
    d[A].merge(cl, k.tick())
    d[B].merge(cl, k.tick())
    lose(case, "2_STORE-AA_1.cdeevent")
    expect = {"stuck": {B: None, C: 201}, "holders": {B},
              "converged": {"9.1-same": False, "9.1-new": False, "9.2": True, "9.2-bare": False, "9.2-marker": True, "9.2-named": True, "9.2-again": True,
                            "9.5-restore": True, "9.5-again": True}}
    return case, expect


def fixture_entity():
    """Limit (3) of 9.2. A/1 (lost) inserts Memo M1, the only Memo there ever is. B holds it; C is
    stuck (201). Salvage: I1 only.
    9.2: no change of the cure or of a later event names Memo, so B's full integration does not
      sweep Memos: B keeps M1: not converged (limit (3)).
    9.2-marker: the cure carries a delete change of CURE-NONE-Memo: the integration names Memo and
      sweeps M1 (no insert named it): converged.
    9.2-named: no readable file names Memo (only the lost event did), so without the model the cure
      cannot know the entity: as 9.2, not converged.
    9.5-restore and 9.5-again: B's A/1 comes back, so M1 is in the expected state: C integrates A/1
      (or the cure inserts M1) and both hold M1."""
    case = fixture_start([A, B, C], [("Item", "I1", ITEM)])
    d, cl, k = case["devices"], case["cloud"], case["clock"]
    d[A].save({"Memo": [{"globalIdentifier": "M1", "type": INSERT, "properties": [attr("text", "m")]}]}, k.tick())
    d[A].merge(cl, k.tick())
    d[B].merge(cl, k.tick())
    lose(case, "2_STORE-AA_1.cdeevent")
    expect = {"stuck": {B: None, C: 201}, "holders": {B},
              "converged": {"9.1-same": False, "9.1-new": False, "9.2": False, "9.2-bare": False, "9.2-marker": True, "9.2-named": False, "9.2-again": True,
                            "9.5-restore": True, "9.5-again": True}}
    return case, expect


def fixture_gap():
    """A gap (200) and a stuck device's own saves. A saves A/1 (title "a1"), A/2 (title "a2"),
    A/3 (note "a3") and exports them; B integrates all three (holder of A/2); A/2 is lost. C, which
    has not merged since BASE0, has the window A/1, A/3: a step of 2: 200. While stuck, C saves C/1
    (title "c1", gc 6, one above the events it imported; its set {A:0, B:0, C:1}) and cannot export it.
    Salvage: BASE0, A/1, A/3, B's merge event: title "a1", note "a3".
    9.2: the cure names A:3, B:1, C:0. C/1 (C at 1) is above it: C keeps it, full-integrates the cure
      then C/1 (title "c1"), exports C/1; B imports C/1 and full-integrates the same. Both: title
      "c1", note "a3" (the expected state: salvage, then C/1).
    9.1-same: the placeholder is named 3_STORE-AA_2, B's name for A/2: B keeps "a2" until C/1
      arrives and sets "c1"; C integrates A/1, the placeholder, A/3, C/1 (own, already applied) and
      B's merge event: both end at title "c1", note "a3": converged, by luck of this history
      (C/1 overwrites the only property A/2 changed).
    9.1-new: the same (B imports the second A/2 but no window of B asks for it).
    9.5-restore: B's A/2 comes back: C's window A/1, A/2, A/3 has no step, C integrates it and then
      exports C/1, which B integrates: title "c1", note "a3" on both (the state with A/2, then C/1).
    9.5-again: as 9.2, from a cure that holds A/2 ("a2", overwritten by C/1 after it)."""
    case = fixture_start([A, B, C], [("Item", "I1", ITEM)])
    d, cl, k = case["devices"], case["cloud"], case["clock"]
    for prop, value in (("title", "a1"), ("title", "a2"), ("note", "a3")):
        d[A].save({"Item": [{"globalIdentifier": "I1", "type": UPDATE, "properties": [attr(prop, value)]}]}, k.tick())
    d[A].merge(cl, k.tick())
    d[B].merge(cl, k.tick())
    lose(case, "3_STORE-AA_2.cdeevent")
    try:
        d[C].merge(cl, k.tick())
    except Stuck:
        pass
    d[C].save({"Item": [{"globalIdentifier": "I1", "type": UPDATE, "properties": [attr("title", "c1")]}]}, k.tick())
    expect = {"stuck": {B: None, C: 200}, "holders": {B},
              "converged": {"9.1-same": True, "9.1-new": True, "9.2": True, "9.2-bare": True, "9.2-marker": True, "9.2-named": True, "9.2-again": True,
                            "9.5-restore": True, "9.5-again": True}}
    return case, expect


def fixture_unseen():
    """A lost revision that nothing in the cloud names. D saves D/1 (I1.note "d1", gc 2); A merges
    it and exports its merge event A/1 {A:1, B:0, C:0, D:1} (gc 3); D/1 is lost (D leaves). A saves
    A/2 (I1.title "a2", gc 4) and exports it; B imports A/1 and A/2 and fails on A/1 (201: D/1), so
    it holds A/2 without having integrated it; A/2 is lost (A leaves). C fails on A/1 too (201).
    The cloud now names D:1 (missing) but nothing names A:2: the cure cannot see it.
    Salvage: BASE0 + A/1 (no changes): title "t0", note null.
    9.2 and 9.2-marker: the cure names A:1, B:0, C:0, D:1. On B, A/2 is not covered: B's full
      integration replays the cure then A/2 (title "a2") and exports its merge event B/1, which
      names A:2; C then fails on it (201) at every merge: not converged.
    9.2-again: the folder now shows A/2 missing (named by B/1): a second cure names A:2 and B:1; B
      deletes A/2 and both full-integrate it: "t0" on both: converged.
    9.1-same: B never imports the placeholder named 4_STORE-AA_2 (its own name for A/2), integrates
      A/2 and keeps "a2"; C integrates the placeholders: "t0": they differ. 9.1-new: B imports a
      second A/2, which no window of B asks for, and still integrates the real A/2: they differ.
    9.5-restore: only A/2 can come back (B holds it; the device that held D/1 is gone): B and C still
      fail on A/1 (201, D/1): not converged. 9.5-again: the cure holds A/2 (title "a2") and names
      D:1; both integrate it in full: "a2" on both, the state with A/2."""
    case = fixture_start([A, B, C, "STORE-DD"], [("Item", "I1", ITEM)])
    d, cl, k = case["devices"], case["cloud"], case["clock"]
    d["STORE-DD"].save({"Item": [{"globalIdentifier": "I1", "type": UPDATE, "properties": [attr("note", "d1")]}]}, k.tick())
    d["STORE-DD"].merge(cl, k.tick())
    d[A].merge(cl, k.tick())
    lose(case, "2_STORE-DD_1.cdeevent")
    d[A].save({"Item": [{"globalIdentifier": "I1", "type": UPDATE, "properties": [attr("title", "a2")]}]}, k.tick())
    d[A].merge(cl, k.tick())
    try:
        d[B].merge(cl, k.tick())
    except Stuck:
        pass
    lose(case, "4_STORE-AA_2.cdeevent")
    expect = {"stuck": {B: 201, C: 201}, "holders": {B},
              "converged": {"9.1-same": False, "9.1-new": False, "9.2": False, "9.2-bare": False, "9.2-marker": False,
                            "9.2-named": False, "9.2-again": True,
                            "9.5-restore": False, "9.5-again": True}}
    return case, expect


def fixture_second_copy():
    """A placeholder with a new global count blocks a holder (8.2). A/1 (I1.title "a1", gc 2) is
    exported; B merges it and exports its merge event B/1 {A:1, B:1, C:0, D:0} (gc 3); C merges
    both and exports C/1 {A:1, B:1, C:1, D:0} (gc 4); A/1 is lost. D fails on B/1 (201). B has not
    merged since C/1 arrived: it would integrate C/1 (its set names A at 1, which B holds): ok.
    9.1-new: the placeholder 5_STORE-AA_1 reaches B as a second A/1; B's window holds C/1, which
      names A at exactly 1, and the lookup of A/1 now finds two events and answers none: B fails
      with 201 at every merge; C keeps "a1", D integrates the placeholder ("t0"): not converged.
    9.1-same: B and C never import the placeholder (their name for A/1): they keep "a1", D "t0".
    9.2: the cure names A:1, B:1, C:1, D:0: everyone integrates it in full: "t0".
    9.5-restore: B's A/1 comes back under its own name, which B and C hold (they skip it); D
      imports it and integrates A/1, B/1, C/1: "a1" everywhere. 9.5-again: the cure holds "a1"."""
    D = "STORE-DD"
    case = fixture_start([A, B, C, D], [("Item", "I1", ITEM)])
    d, cl, k = case["devices"], case["cloud"], case["clock"]
    d[A].save({"Item": [{"globalIdentifier": "I1", "type": UPDATE, "properties": [attr("title", "a1")]}]}, k.tick())
    d[A].merge(cl, k.tick())
    d[B].merge(cl, k.tick())
    d[C].merge(cl, k.tick())
    lose(case, "2_STORE-AA_1.cdeevent")
    expect = {"stuck": {B: None, C: None, D: 201}, "holders": {B, C},
              "converged": {"9.1-same": False, "9.1-new": False, "9.2": True, "9.2-bare": True, "9.2-marker": True,
                            "9.2-named": True, "9.2-again": True,
                            "9.5-restore": True, "9.5-again": True},
              "stuck after": {"9.1-new": {B: 201}, "9.1-same": {}, "9.2": {}}}
    return case, expect


FIXTURES = [fixture_dependency, fixture_listing, fixture_entity, fixture_gap, fixture_unseen, fixture_second_copy]


def holders(case):
    return {s for s, d in case["devices"].items()
            if any(e["uniqueIdentifier"] == l["uniqueIdentifier"] for l in case["lost"] for e in d.events.values())}


def check_fixtures(verbose):
    failures = []
    for make in FIXTURES:
        case, expect = make()
        stuck = {s: (err.code if err else None) for s, err in before_cure(case).items()}
        got = {"stuck": stuck, "holders": holders(case), "converged": {}}
        if "stuck after" in expect:
            got["stuck after"] = {}
        for name, cure in CANDIDATES:
            res = evaluate(case, name, cure, 1)
            got["converged"][name] = res["converged"]
            if name in expect.get("stuck after", {}):
                got["stuck after"][name] = res["stuck after"]
        ok = got == expect
        if not ok:
            failures.append(make.__name__)
        print("%s fixture %s%s" % ("OK  " if ok else "FAIL", make.__name__[len("fixture_"):],
                                   "" if ok else ": expected %r, got %r" % (expect, got)))
    return failures


# Seeds beyond the first 300 whose histories need rule 7 of repair.md 9.3 for saves two stuck
# devices made (found in seeds 1..2000; without the second cure their devices end apart). The
# default run adds them, so that CI exercises that rule.
RULE7_SEEDS = (753, 799, 896, 1941, 1942)


def run_seeds(seeds, verbose):
    stats = {name: {"converged": 0, "not": 0, "limit3": 0, "first": None, "again": 0, "stuck seeds": 0, "stuck seeds converged": 0}
             for name, _ in CANDIDATES}
    before = {"devices": 0, "stuck": 0, "codes": {}, "holders": 0, "stuck holders": 0, "seeds with stuck": 0,
              "some recovered": 0, "all recovered": 0}
    for seed in seeds:
        case = draw_history(random.Random(seed))
        stuck = before_cure(case)
        hs = holders(case)
        if verbose:
            print("seed %d: lost %s; before the cure: %s" % (seed, ", ".join(event_name(e) for e in case["lost"]), ", ".join(
                "%s%s %s" % (st, " (holder)" if st in hs else "", "stuck %s" % err if err else "ok") for st, err in sorted(stuck.items()))))
        before["devices"] += len(stuck)
        before["holders"] += len(hs)
        before["seeds with stuck"] += any(stuck.values())
        back = len(recovered(case)["events"]) - len(case["cloud"]["events"])
        before["some recovered"] += back > 0
        before["all recovered"] += back == len(case["lost"])
        for s, err in stuck.items():
            if err:
                before["stuck"] += 1
                before["codes"][err.code] = before["codes"].get(err.code, 0) + 1
                before["stuck holders"] += s in hs
        for name, cure in CANDIDATES:
            res = evaluate(case, name, cure, seed)
            st = stats[name]
            st["again"] += res["cures"] > 1
            if any(stuck.values()):
                st["stuck seeds"] += 1
                st["stuck seeds converged"] += res["converged"]
            if res["converged"]:
                st["converged"] += 1
            else:
                st["not"] += 1
                st["limit3"] += res["limit3"]
                if st["first"] is None or (st["first"][2] and not res["limit3"]):
                    st["first"] = (seed, res["problems"], res["limit3"], case, stuck, hs)
            if verbose and not res["converged"]:
                print("seed %d %s: %s" % (seed, name, "; ".join(res["problems"][:2])))
    return stats, before


def describe(seed, problems, case, stuck, hs):
    lines = ["    seed %d: lost %s; devices %s; holders %s; before the cure: %s" % (
        seed, ", ".join(event_name(e) for e in case["lost"]), ", ".join(sorted(case["devices"])),
        ", ".join(sorted(hs)) or "none", ", ".join("%s %s" % (s, "stuck %s" % e if e else "ok") for s, e in sorted(stuck.items())))]
    lines += ["    " + p for p in problems[:4]]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Folders: writing a case, reading a cured folder

# The v2 JSON text and registration file the differential test writes, so that both scripts write
# folders alike.
_spec = importlib.util.spec_from_file_location("differential", os.path.join(os.path.dirname(os.path.abspath(__file__)), "device-mode-differential.py"))
_differential = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_differential)
canon = _differential.canon
REGISTRATION = _differential.REGISTRATION


def write_folder(cloud, ens):
    for sub in ("stores", "events", "baselines", "data"):
        os.makedirs(os.path.join(ens, sub), exist_ok=True)
    for s in sorted(cloud["stores"]):
        with open(os.path.join(ens, "stores", s), "w", encoding="utf-8") as out:
            out.write(REGISTRATION % s)
    for folder in ("events", "baselines"):
        for name, ev in sorted(cloud[folder].items()):
            with open(os.path.join(ens, folder, name), "w", encoding="utf-8") as out:
                out.write(canon(ev))


def read_folder(ens):
    """events/ and baselines/ of an ensemble folder: single-file v2 JSON events only."""
    cloud = {"events": {}, "baselines": {}, "stores": set()}
    stores_dir = os.path.join(ens, "stores")
    if os.path.isdir(stores_dir):
        cloud["stores"] = {n for n in os.listdir(stores_dir) if not n.startswith(".")}
    for folder in ("events", "baselines"):
        d = os.path.join(ens, folder)
        for name in sorted(os.listdir(d)) if os.path.isdir(d) else []:
            if name.startswith(".") or not name.endswith(".cdeevent"):
                continue
            with open(os.path.join(d, name), encoding="utf-8") as f:
                ev = json.load(f)
            for key in ("globalCount", "storeIdentifier", "revisionsByStoreIdentifier", "timestamp", "type", "uniqueIdentifier"):
                if key not in ev:
                    raise ValueError("%s/%s: no %s (multipart files are not read)" % (folder, name, key))
            if event_name(ev) != name and not (folder == "baselines" and name == "%d_%s.cdeevent" % (ev["globalCount"], ev["uniqueIdentifier"])):
                raise ValueError("%s/%s: the name does not match the content (expected %s)" % (folder, name, event_name(ev)))
            cloud[folder][name] = ev
    return cloud


def model_contents():
    """SCHEMA as a Core Data model `contents` file (model.md 2-4), for a cure that needs the
    entities of the model (repair.md 9.3 rule 3)."""
    lines = ['<?xml version="1.0" encoding="UTF-8" standalone="yes"?>',
             '<model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">']
    for entity in sorted(SCHEMA):
        lines.append('    <entity name="%s" representedClassName="%s" syncable="YES">' % (entity, entity))
        for p, kind in sorted(SCHEMA[entity].items()):
            if kind == "a":
                lines.append('        <attribute name="%s" optional="YES" attributeType="String"/>' % p)
            elif kind[0] == "1":
                lines.append('        <relationship name="%s" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="%s"/>' % (p, kind[1]))
            else:
                lines.append('        <relationship name="%s" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="%s"/>' % (p, kind[1]))
        lines.append('    </entity>')
    lines.append('</model>')
    return "\n".join(lines) + "\n"


def write_case(seed, out_dir):
    case = draw_history(random.Random(seed))
    write_folder(case["cloud"], os.path.join(out_dir, "cloud", "E"))
    os.makedirs(os.path.join(out_dir, "Model.xcdatamodel"), exist_ok=True)
    with open(os.path.join(out_dir, "Model.xcdatamodel", "contents"), "w", encoding="utf-8") as out:
        out.write(model_contents())
    doc = {"seed": seed, "clock": case["clock"].t, "lost": [event_name(e) for e in case["lost"]],
           "devices": [d.to_json() for _, d in sorted(case["devices"].items())]}
    with open(os.path.join(out_dir, "devices.json"), "w", encoding="utf-8") as out:
        out.write(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    with open(os.path.join(out_dir, "expected.json"), "w", encoding="utf-8") as out:
        out.write(json.dumps(normal(salvage(case["cloud"])), indent=1, sort_keys=True) + "\n")
    print("wrote %s: cloud/E (%d events, %d baselines; lost %s), devices.json (%d devices), expected.json, Model.xcdatamodel" % (
        out_dir, len(case["cloud"]["events"]), len(case["cloud"]["baselines"]), ", ".join(doc["lost"]), len(doc["devices"])))


def check_cured_folder(ens, devices_path, expected_path, write_back=False):
    try:
        cloud = read_folder(ens)
        with open(devices_path, encoding="utf-8") as f:
            doc = json.load(f)
        devices = {d["store"]: Device.from_json(d) for d in doc["devices"]}
        expected = None
        if expected_path:
            with open(expected_path, encoding="utf-8") as f:
                expected = json.load(f)
    except (OSError, ValueError, KeyError) as exc:
        print("cure-simulation: %s" % exc, file=sys.stderr)
        return 2
    clock = Clock()
    clock.t = max([doc.get("clock", 0)] + [float(e["timestamp"]) for e in all_files(cloud)])
    errors, rounds, quiet, exported = run_until_quiet(cloud, devices, random.Random(doc.get("seed", 0)), clock)
    states = {s: normal(d.app) for s, d in devices.items()}
    reference = next(iter(states.values())) if states else {}
    reasons = []
    for s in sorted(devices):
        same = states[s] == reference
        print("device %s: %s, store %s" % (s, "stuck %s" % errors[s] if s in errors else "ok",
                                            "equal to the first device's" if same else "differs from the first device's"))
        if not same:
            reasons.append("%s differs: %s" % (s, "; ".join(diff_states(states[s], reference))))
    if errors:
        reasons.append("%d devices still stuck" % len(errors))
    if not quiet:
        reasons.append("not quiet after %d rounds" % rounds)
    if expected is not None:
        want = normal(replay(sorted(exported.values(), key=order_key),
                             {g: {"entity": o["entity"], "values": {p: set(v) if SCHEMA[o["entity"]][p][0] == "m" else v
                                                                    for p, v in o["values"].items()}} for g, o in expected.items()}))
        for s in sorted(devices):
            if states[s] != want:
                reasons.append("%s differs from the expected state: %s" % (s, "; ".join(diff_states(states[s], want))))
    missing, late = missing_in_cloud(cloud), late_stores(cloud)
    if missing:
        print("the folder now shows missing revisions: %s (cure it again)" % ", ".join("%s/%d" % m for m in missing))
    if len(late) >= 2:
        print("the folder now holds events made before the cure by %s (cure it again)" % ", ".join(sorted(late)))
    if write_back:
        # the folder and the devices as the devices left them, for a second cure and a second check
        for folder in ("events", "baselines"):
            for name in os.listdir(os.path.join(ens, folder)):
                if name.endswith(".cdeevent") and not name.startswith(".") and name not in cloud[folder]:
                    os.remove(os.path.join(ens, folder, name))
        write_folder(cloud, ens)
        doc["devices"] = [d.to_json() for _, d in sorted(devices.items())]
        doc["clock"] = clock.t
        with open(devices_path, "w", encoding="utf-8") as out:
            out.write(json.dumps(doc, indent=1, sort_keys=True) + "\n")
        if expected is not None:
            with open(expected_path, "w", encoding="utf-8") as out:
                out.write(json.dumps(want, indent=1, sort_keys=True) + "\n")
    print("converged (%d rounds)" % rounds if not reasons else "not converged: " + " | ".join(reasons))
    return 0 if not reasons else 1


def apply_python_cure(ens, quarantine):
    """The reference 9.2 cure (variant marker), on a folder: writes the baseline into baselines/ and
    moves the covered files to QUARANTINE/<folder>/<name>. For testing the --cured-folder mode."""
    cloud = read_folder(ens)
    cured, moved = cure_baseline(cloud, "marker", uid="CURE%s" % uuid.uuid4().hex.upper())  # never reused
    for folder, name in moved:
        os.makedirs(os.path.join(quarantine, folder), exist_ok=True)
        os.rename(os.path.join(ens, folder, name), os.path.join(quarantine, folder, name))
    for name, b in cured["baselines"].items():
        if name not in cloud["baselines"]:
            with open(os.path.join(ens, "baselines", name), "w", encoding="utf-8") as out:
                out.write(canon(b))
    print("cured %s: wrote %d baseline, moved %d files" % (ens, 1, len(moved)))
    return 0


def main(argv):
    started = time.process_time()
    args = list(argv)
    verbose = "--verbose" in args
    args = [a for a in args if a != "--verbose"]
    try:
        if args[:1] == ["--write-case"] and len(args) == 3:
            write_case(int(args[1]), args[2])
            return 0
        if args[:1] == ["--apply-python-cure"] and len(args) == 3:
            return apply_python_cure(args[1], args[2])
        if args[:1] == ["--cured-folder"]:
            write_back = "--write-back" in args
            args = [a for a in args if a != "--write-back"]
            opts = dict(zip(args[0::2], args[1::2]))
            if len(args) % 2 or "--devices" not in opts or set(opts) - {"--cured-folder", "--devices", "--expected"}:
                raise ValueError
            return check_cured_folder(opts["--cured-folder"], opts["--devices"], opts.get("--expected"), write_back)
        first, count, fixtures_only, extra = 1, 300, False, RULE7_SEEDS
        while args:
            if args[0] == "--seeds" and len(args) >= 3:
                first, count, extra, args = int(args[1]), int(args[2]), (), args[3:]
            elif args[0] == "--count" and len(args) >= 2:
                first, count, args = 1, int(args[1]), args[2:]
            elif args[0] == "--fixtures-only":
                fixtures_only, args = True, args[1:]
            else:
                raise ValueError
    except ValueError:
        print(__doc__, file=sys.stderr)
        return 2
    failures = check_fixtures(verbose)
    bad = bool(failures)
    if not fixtures_only:
        seeds = list(range(first, first + count)) + [x for x in extra if not first <= x < first + count]
        count = len(seeds)
        stats, before = run_seeds(seeds, verbose)
        print("before the cure: %d devices in %d seeds, %d stuck (%s) in %d seeds; %d holders of a lost event, %d of them stuck" % (
            before["devices"], count, before["stuck"], ", ".join("%d x%d" % kv for kv in sorted(before["codes"].items())),
            before["seeds with stuck"], before["holders"], before["stuck holders"]))
        print("a device still holds a lost event in %d seeds, every lost event in %d" % (before["some recovered"], before["all recovered"]))
        for name, _ in CANDIDATES:
            st = stats[name]
            line = "%-10s converged %d/%d, not %d; seeds with a stuck device: %d/%d converged" % (
                name, st["converged"], count, st["not"], st["stuck seeds converged"], st["stuck seeds"])
            if st["again"]:
                line += "; a second cure in %d seeds" % st["again"]
            if name.startswith("9.2"):
                line += "; not converged by limit (3) alone (objects of an entity no replayed change names): %d" % st["limit3"]
            print(line)
            if st["first"]:
                seed, problems, limit3, case, stuck, hs = st["first"]
                print("  first counter-example%s:\n%s" % (" (limit (3))" if limit3 else "", describe(seed, problems, case, stuck, hs)))
        if stats["9.2-again"]["not"] or stats["9.5-again"]["not"]:
            bad = True
    print("cure simulation: %s, %.1f s" % ("FAIL" if bad else "ok", time.process_time() - started))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
