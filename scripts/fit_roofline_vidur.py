import csv, glob, itertools, math
PEAK=312e12; BW=2039e9
rows=[]
for f in sorted(glob.glob('a100_*_ops.csv')):
    for r in csv.DictReader(open(f)):
        T=int(r['num_tokens']); t=int(r['num_tensor_parallel_workers'])
        h=int(r['n_embd']); f_=int(r['n_expanded_embd']); a=int(r['n_head']); g=int(r['n_kv_head']); gated=r['use_gated_mlp'] in ('True','true','1')
        hd=h//a
        def add(kind,m,n,k,col):
            v=r.get('time_stats.%s.median'%col)
            if not v: return
            rows.append((kind,2*m*n*k,(m*k+k*n+m*n)*2,float(v)*1e-3,f,T))
        add('gemm',T,(a+2*g)*hd//t,h,'attn_pre_proj')
        add('gemm',T,h,a*hd//t,'attn_post_proj')
        add('gemm',T,f_*(2 if gated else 1)//t,h,'mlp_up_proj')
        add('gemm',T,h,f_//t,'mlp_down_proj')
        v=r.get('time_stats.input_layernorm.median')
        if v: rows.append(('mem',0,2*T*h*2,float(v)*1e-3,f,T))
        v=r.get('time_stats.mlp_act.median')
        if v: rows.append(('mem',0,3*T*f_//t*2 if gated else 2*T*f_//t*2,float(v)*1e-3,f,T))
        v=r.get('time_stats.add.median')
        if v: rows.append(('mem',0,3*T*h*2,float(v)*1e-3,f,T))
print(len(rows))
def err(params, sel):
    me,he,ov=params
    s=0;n=0
    for k,fl,by,t,f,T in sel:
        p=max(fl/(me*PEAK), by/(he*BW))+ov
        s+=abs(p/t-1); n+=1
    return s/n
gem=[r for r in rows if r[0]=='gemm']
mem=[r for r in rows if r[0]=='mem']
best=None
for me in [x/100 for x in range(55,90,2)]:
  for he in [x/100 for x in range(40,100,4)]:
    for ov in [x*1e-6 for x in (2,4,6,8,10,12,15)]:
      e=err((me,he,ov),gem)
      if best is None or e<best[0]: best=(e,me,he,ov)
print('gemm fit',best)
bm=None
for he in [x/100 for x in range(30,100,2)]:
    for ov in [x*1e-6 for x in (2,3,4,5,6,8,10)]:
      e=err((0.7,he,ov),mem)
      if bm is None or e<bm[0]: bm=(e,he,ov)
print('mem fit',bm)
# datasheet roofline
print('datasheet gemm', err((1,1,0),gem), 'mem', err((1,1,0),mem))
big=[r for r in gem if r[5]>=1024]
print('gemm big only', err(best[1:],big))
