# Before/after table per format from `ctxbudget reconcile PATHS --format json --per-request`.
import json, math, sys
d = json.load(sys.stdin)
def q(v, p):
    v = sorted(v); return v[max(1, math.ceil(p * len(v))) - 1] if v else None
fmt = {}
for c in d['conversations']:
    rows = c.get('requests_detail') or []
    e = fmt.setdefault(c['format'], {'before': [], 'y': 0, 'x': 0})
    if c['recorded_requests'] < 3: continue
    for r in rows:
        if r['recorded']:
            e['before'].append(abs(r['recorded'] - r['replayed']) / r['recorded'])
            e['y'] += r['recorded']; e['x'] += r['replayed']
for f in d['formats']:
    e = fmt[f['format']]; k = f['calibrated']
    if not e['before']: continue
    p = lambda v: '%.1f%%' % (100 * v)
    print(f"| {f['format']} | {k['requests']} | {p(q(e['before'], .5))} / {p(q(e['before'], .9))} / {e['y'] / e['x']:.3f} | {p(k['median_rel'])} / {p(k['p90_rel'])} / {k['total_ratio']:.3f} |")
