import csv, sys, collections
rows = list(csv.reader(open(sys.argv[1])))
hdr_i = next(i for i, r in enumerate(rows) if "Metric Name" in r)
hdr = rows[hdr_i]
k = hdr.index("Kernel Name"); mn = hdr.index("Metric Name"); mv = hdr.index("Metric Value"); idc = hdr.index("ID")
data = collections.OrderedDict()
for r in rows[hdr_i + 1:]:
    if len(r) <= mv: continue
    name = r[k].split("(")[0].split("<")[0].replace("void ", "").replace("gemmtiles::", "")[:28]
    data.setdefault((r[idc], name), {})[r[mn]] = r[mv]
metrics = list(next(iter(data.values())).keys())
for (i, name), d in data.items():
    print(name, "|", " ".join(f"{m.split('.')[0].split('__')[-1][-28:]}={d[m]}" for m in metrics))
