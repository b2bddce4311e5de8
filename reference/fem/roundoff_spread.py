#!/usr/bin/env python3
"""Measure how far legitimate linear solvers spread pointwise in the round-off
regime: the derivation of grade_fem.py's pointwise tolerance for n >= 512
(problem_spec.md, "Pointwise tolerance").  Not part of the tests; ~30 s.

For every mesh it compares 16 solver/ordering variants x 3 load quadratures
with the grader's reference (5-point Gauss, banded LU) and prints the worst
deviation and that deviation divided by (n/256)^4.

    python reference/fem/roundoff_spread.py
"""
import numpy as np, scipy.linalg as sl, scipy.sparse as sp, scipy.sparse.linalg as spl
def load(x): return np.exp(x)*(x**4+14*x**3+49*x**2+32*x-12)
def basis(t,h): return np.stack([1-3*t**2+2*t**3, h*(t-2*t**2+t**3), 3*t**2-2*t**3, h*(t**3-t**2)],-1)
def assemble(n,q):
    h=1/n; nd=2*(n+1)
    ke=np.array([[12,6*h,-12,6*h],[6*h,4*h*h,-6*h,2*h*h],[-12,-6*h,12,-6*h],[6*h,2*h*h,-6*h,4*h*h]])/h**3
    K=np.zeros((nd,nd)); F=np.zeros(nd)
    t,w=np.polynomial.legendre.leggauss(q); t=(t+1)/2; w=w/2
    N=basis(t,h)
    for k in range(n):
        d=slice(2*k,2*k+4); K[d,d]+=ke; F[d]+=h*(w*load((k+t)*h))@N
    return K[2:-2,2:-2], F[2:-2]
def evaluate(c,n,x):
    U=np.concatenate([[0,0],c,[0,0]]); h=1/n
    k=np.minimum(np.floor(x*n).astype(int),n-1); t=x*n-k
    L=np.stack([U[2*k],U[2*k+1],U[2*k+2],U[2*k+3]],-1)
    return np.sum(basis(t,h)*L,-1)
def bandfast(A,l,u):
    m=A.shape[0]; ab=np.zeros((l+u+1,m))
    for d in range(-l,u+1):
        diag=np.diagonal(A,d)
        if d>=0: ab[u-d,d:]=diag
        else: ab[u-d,:m+d]=diag
    return ab
solvers={
 'np.solve':lambda A,b: np.linalg.solve(A,b),
 'sl.solve':lambda A,b: sl.solve(A,b),
 'sl.solve_gen':lambda A,b: sl.solve(A,b,assume_a='gen'),
 'lu_factor':lambda A,b: sl.lu_solve(sl.lu_factor(A),b),
 'solve_banded':lambda A,b: sl.solve_banded((3,3),bandfast(A,3,3),b),
 'solveh_banded':lambda A,b: sl.solveh_banded(bandfast(A,0,3)[:4],b),
 'solveh_banded_lower':lambda A,b: sl.solveh_banded(bandfast(A,3,0),b,lower=True),
 'cho_factor':lambda A,b: sl.cho_solve(sl.cho_factor(A),b),
 'spsolve_csr':lambda A,b: spl.spsolve(sp.csr_matrix(A),b),
 'spsolve_csc':lambda A,b: spl.spsolve(sp.csc_matrix(A),b),
 'splu':lambda A,b: spl.splu(sp.csc_matrix(A)).solve(b),
 'inv':lambda A,b: np.linalg.inv(A)@b,
 'sl.inv':lambda A,b: sl.inv(A)@b,
}
import sys
def perm_block(n):
    m=2*(n-1); return np.concatenate([np.arange(0,m,2),np.arange(1,m,2)])
res={}
for n in [32,64,128,256,512,1024,2048]:
    x=np.arange(10*n+1)/(10*n)
    A5,b5=assemble(n,5)
    ref=evaluate(sl.solve_banded((3,3),bandfast(A5,3,3),b5),n,x)
    ue=np.exp(x)*x**2*(1-x)**2
    print(n,'ref err',np.max(abs(ref-ue)))
    for q in (3,4,5):
        A,b=assemble(n,q)
        for name,f in solvers.items():
            c=f(A,b); d=np.max(abs(evaluate(c,n,x)-ref))
            res[(n,q,name)]=d
        # blocked ordering
        P=perm_block(n); c=np.empty_like(b); c[P]=spl.spsolve(sp.csr_matrix(A[np.ix_(P,P)]),b[P]); res[(n,q,'block_spsolve')]=np.max(abs(evaluate(c,n,x)-ref))
        c=np.empty_like(b); c[P]=sl.solve(A[np.ix_(P,P)],b[P]); res[(n,q,'block_sl.solve')]=np.max(abs(evaluate(c,n,x)-ref))
        c=np.empty_like(b); c[P]=np.linalg.solve(A[np.ix_(P,P)],b[P]); res[(n,q,'block_np.solve')]=np.max(abs(evaluate(c,n,x)-ref))
    worst=max((v,k) for k,v in res.items() if k[0]==n)
    print(n, 'worst', worst, 'scaled', worst[0]/(n/256)**4)
    for q in (3,5):
        print('  ', q, {k[2]:f"{v:.1e}" for k,v in res.items() if k[0]==n and k[1]==q})
    sys.stdout.flush()
