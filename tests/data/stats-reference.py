#!/usr/bin/env python3
# stats-reference.py: how the reference values in tests/test_fit.c and tests/test_compare.c were computed,
# with mpmath (python3-mpmath), independently of GSL. Not run by the suite; the large-count part takes minutes.
# Usage: python3 tests/data/stats-reference.py [--large]
import sys
from mpmath import mp, mpf, exp, sqrt, pi, log, nsum, inf, betainc, gammainc, findroot, digamma, loggamma
mp.dps = 40
def Q(l):  # Kolmogorov survival, alternating series (converges for every l > 0 at this precision)
    l = mpf(l)
    return 2*nsum(lambda j: (-1)**(j-1)*exp(-2*j*j*l*l), [1, inf])
def Qtheta(l):
    l = mpf(l)
    return 1 - sqrt(2*pi)/l*nsum(lambda j: exp(-(2*j-1)**2*pi**2/(8*l*l)), [1, inf])
print("Q_KS:")
for l in ['0.3','0.5','0.8','1.0','1.17','1.19','1.3581','1.6276','2.0','3.0']:
    a = Qtheta(l) if mpf(l) < 1 else Q(l)
    print(f"  {l}: {mp.nstr(a, 17)}  (other series {mp.nstr(Q(l) if mpf(l)<1 else Qtheta(l),17)})")
print("one-sample example lambda sqrt(3)*0.3:", mp.nstr(Qtheta(sqrt(3)*mpf('0.3')),17))
print("two-sample example lambda sqrt(12/7)*0.5:", mp.nstr(Qtheta(sqrt(mpf(12)/7)*mpf('0.5')),17))
print("two-sample tie example lambda sqrt(9/6)/3:", mp.nstr(Qtheta(sqrt(mpf(9)/6)/3),17))

def chi2_cdf(x, k): return gammainc(mpf(k)/2, 0, mpf(x)/2, regularized=True)
def chi2_q(p, k): return findroot(lambda x: chi2_cdf(x, k) - p, mpf(k))
def beta_q(p, a, b):
    lo, hi = mpf(0), mpf(1)
    for _ in range(200):
        mid = (lo+hi)/2
        if betainc(a, b, 0, mid, regularized=True) < p: lo = mid
        else: hi = mid
    return (lo+hi)/2
def t_cdf(t, nu):
    t, nu = mpf(t), mpf(nu)
    x = nu/(nu+t*t)
    tail = betainc(nu/2, mpf(1)/2, 0, x, regularized=True)/2
    return 1 - tail if t > 0 else tail
def t_q(p, nu): return findroot(lambda t: t_cdf(t, nu) - p, mpf(2))

print("exponential x={1,2,3,4,10}: mean 4, loglik", mp.nstr(-5*log(4)-5,17),
      "CI", mp.nstr(10*4/chi2_q(mpf('0.975'),10),17), mp.nstr(10*4/chi2_q(mpf('0.025'),10),17))
y=[0,1,2,3]; print("lognormal logs 0..3: mu 1.5 sigma", mp.nstr(sqrt(mpf(5)/4),17), "loglik",
      mp.nstr(-6-4*log(sqrt(mpf(5)/4))-2*log(2*pi)-2,17))
x=[mpf(v) for v in (1,2,3,4,10)]; n=len(x)
s = log(sum(x)/n) - sum(log(v) for v in x)/n
k = findroot(lambda k: log(k)-digamma(k)-s, mpf(2)); th = sum(x)/n/k
ll = (k-1)*sum(log(v) for v in x) - sum(x)/th - n*k*log(th) - n*loggamma(k)
print("gamma x={1,2,3,4,10}: k", mp.nstr(k,17), "theta", mp.nstr(th,17), "loglik", mp.nstr(ll,17))
# Shares
z = sqrt(2)*mp.erfinv(mpf('0.95'))
def wilson(k,n,z=z):
    p=mpf(k)/n; c=(p+z*z/(2*n))/(1+z*z/n); h=z/(1+z*z/n)*sqrt(p*(1-p)/n+z*z/(4*n*n)); return c-h,c+h
print("z95", mp.nstr(z,17))
print("wilson 5/10", [mp.nstr(v,17) for v in wilson(5,10)]); print("wilson 81/263", [mp.nstr(v,17) for v in wilson(81,263)])
print("wilson 0/10", [mp.nstr(v,17) for v in wilson(0,10)])
print("CP 5/10", mp.nstr(beta_q(mpf('0.025'),5,6),17), mp.nstr(beta_q(mpf('0.975'),6,5),17))
print("CP 0/10 hi", mp.nstr(1-mpf('0.025')**(mpf(1)/10),17), " 10/10 lo", mp.nstr(mpf('0.025')**(mpf(1)/10),17))
print("CP 81/263", mp.nstr(beta_q(mpf('0.025'),81,183),17), mp.nstr(beta_q(mpf('0.975'),82,182),17))
z3 = sqrt(2)*mp.erfinv(1-mpf('0.05')/3)
print("bonferroni wilson 50/100 at 1-0.05/3", [mp.nstr(v,17) for v in wilson(50,100,z3)])
print("poisson 0/1 hi", mp.nstr(chi2_q(mpf('0.975'),2)/2,17), " 10/2", mp.nstr(chi2_q(mpf('0.025'),20)/4,17), mp.nstr(chi2_q(mpf('0.975'),22)/4,17))
# Mean CI and Welch
a=[mpf(v) for v in (1,2,3,4,5)]; b=[mpf(v) for v in (2,4,6,8,10,12)]
def ms(x):
    n=len(x); m=sum(x)/n; v=sum((xi-m)**2 for xi in x)/(n-1); return n,m,v
na,ma,va=ms(a); nb,mb,vb=ms(b)
t4=t_q(mpf('0.975'),4); h=t4*sqrt(va/na)
print("t(0.975,4)", mp.nstr(t4,17), "meanCI a", mp.nstr(ma-h,17), mp.nstr(ma+h,17))
se2=va/na+vb/nb; t=(mb-ma)/sqrt(se2); df=se2**2/((va/na)**2/(na-1)+(vb/nb)**2/(nb-1)); p=2*(1-t_cdf(abs(t),df))
print("welch t", mp.nstr(t,17), "df", mp.nstr(df,17), "p", mp.nstr(p,17))
print("compare pooled KS p Q(sqrt(2)/2):", mp.nstr(Qtheta(sqrt(2)*mpf('0.5')), 17), " per-vantage Q(sqrt(2/3)/2):", mp.nstr(Qtheta(sqrt(mpf(2)/3)*mpf('0.5')), 17))
print("gamma shape 0.01 median:", mp.nstr(exp(findroot(lambda lx: log(gammainc(mpf('0.01'), 0, exp(lx), regularized=True)) - log(mpf('0.5')), -70)), 17))

if "--large" not in sys.argv: sys.exit(0)

from mpmath import mp, mpf, exp, log, loggamma, sqrt
mp.dps = 40
def pois_ge(k, lam):  # P(Poisson(lam) >= k) = sum_{j>=k}
    lt = -lam + k*log(lam) - loggamma(k+1); t = exp(lt); s = mpf(0); j = k
    while True:
        s += t; t *= lam/(j+1); j += 1
        if t < s*mpf(10)**-45: break
    return s
def binom_ge(k, n, x):  # P(Bin(n, x) >= k)
    lt = loggamma(n+1) - loggamma(k+1) - loggamma(n-k+1) + k*log(x) + (n-k)*log(1-x); t = exp(lt); s = mpf(0); j = k
    while j <= n:
        s += t; t *= mpf(n-j)/(j+1)*x/(1-x); j += 1
        if t < s*mpf(10)**-45: break
    return s
def bisect(f, p, lo, hi, it=140):
    for _ in range(it):
        mid = (lo+hi)/2
        if f(mid) < p: lo = mid
        else: hi = mid
    return (lo+hi)/2
def chi2_q(p, nu):  # nu even
    k = nu//2; nu = mpf(nu)
    return bisect(lambda x: pois_ge(k, x/2), p, nu - 12*sqrt(2*nu), nu + 12*sqrt(2*nu))
def cp_lo(k, n, a2):  # Beta^{-1}(a2; k, n-k+1): I_x = P(Bin(n,x) >= k)
    m = mpf(k)/n; sd = sqrt(m*(1-m)/n)
    return bisect(lambda x: binom_ge(k, n, x), a2, m - 12*sd, m + 12*sd)
def cp_hi(k, n, a2):  # Beta^{-1}(1-a2; k+1, n-k) = the x with P(Bin(n,x) >= k+1) = 1 - a2
    m = mpf(k)/n; sd = sqrt(m*(1-m)/n)
    return bisect(lambda x: binom_ge(k+1, n, x), 1-a2, m - 12*sd, m + 12*sd)
q = mpf('0.025')
print("poisson 1e6 in 1e3: [", mp.nstr(chi2_q(q, 2*10**6)/2000, 17), ",", mp.nstr(chi2_q(1-q, 2*10**6+2)/2000, 17), "]")
print("exp fit n=1e5 factors:", mp.nstr(mpf(2*10**5)/chi2_q(1-q, 2*10**5), 17), mp.nstr(mpf(2*10**5)/chi2_q(q, 2*10**5), 17))
print("CP 3e5/1e6:", mp.nstr(cp_lo(300000, 10**6, q), 17), mp.nstr(cp_hi(300000, 10**6, q), 17))
print("CP 200000/1e6:", mp.nstr(cp_lo(200000, 10**6, q), 17), mp.nstr(cp_hi(200000, 10**6, q), 17))
print("CP 5e6/2e7:", mp.nstr(cp_lo(5*10**6, 2*10**7, q), 17), mp.nstr(cp_hi(5*10**6, 2*10**7, q), 17))
